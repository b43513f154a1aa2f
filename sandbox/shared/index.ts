export { hash32, mulberry32, Rng } from './prng';
export { sendJson, sendJsonError, listenLocal } from './http';
export type { LocalServer } from './http';
export { maxInAnyWindow, monotonicNow } from './rate';
