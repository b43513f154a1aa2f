/**
 * The WEFT_ENCRYPTION_KEY the replay histories are recorded with (tests/replay/record-histories.ts)
 * and replayed with: histories recorded since payloads are encrypted hold ciphertext, which the
 * replaying worker decodes with the payload codec keyed from this. A fixed test key, in the
 * repository on purpose: it protects nothing but these recordings of simulator data.
 */
export const REPLAY_ENCRYPTION_KEY = 'd2VmdC1yZXBsYXktaGlzdG9yaWVzLXRlc3Qta2V5ISE=';
