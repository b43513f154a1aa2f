import type { Collection, Db } from 'mongodb';

interface SlotDoc {
  _id: string;
  key: string;
  slot: number;
  used_at: Date;
}

export type SlotGrant = { acquired: true; slotId: string } | { acquired: false; waitMs: number };

/**
 * A sliding-window request budget shared by every process that talks to one provider
 * account. The budget is `limit` slot documents per key; taking a slot is one atomic
 * findOneAndUpdate that only matches a slot last used at least `windowMs` ago. So no
 * window of length `windowMs` can contain more than `limit` requests, whichever worker
 * sends them, and no lock or transaction is needed (FerretDB has none).
 */
export class RateBudgetStore {
  private readonly col: Collection<SlotDoc>;
  private readonly initialised = new Set<string>();

  constructor(db: Db) {
    this.col = db.collection<SlotDoc>('rate_budget_slots');
  }

  async ensureIndexes(): Promise<void> {
    await this.col.createIndex({ key: 1, used_at: 1 });
  }

  async tryAcquire(key: string, limit: number, windowMs: number, now = Date.now()): Promise<SlotGrant> {
    await this.ensureSlots(key, limit);
    const taken = await this.col.findOneAndUpdate(
      { key, slot: { $lt: limit }, used_at: { $lte: new Date(now - windowMs) } },
      { $set: { used_at: new Date(now) } },
      { returnDocument: 'after' },
    );
    if (taken) return { acquired: true, slotId: taken._id };
    const oldest = await this.col.find({ key, slot: { $lt: limit } }).sort({ used_at: 1 }).limit(1).next();
    const waitMs = oldest ? Math.max(1, oldest.used_at.getTime() + windowMs - now) : 1;
    return { acquired: false, waitMs };
  }

  /**
   * Moves the slot's time to when the response arrived. The provider counted the request
   * somewhere between send and receive; counting from receipt keeps us on the safe side
   * of its window even when latency varies.
   */
  async markCompleted(slotId: string, at = new Date()): Promise<void> {
    await this.col.updateOne({ _id: slotId }, { $max: { used_at: at } });
  }

  /** After a provider lockout, hold every slot until the lockout ends. */
  async blockUntil(key: string, limit: number, windowMs: number, until: Date): Promise<void> {
    await this.ensureSlots(key, limit);
    await this.col.updateMany({ key }, { $max: { used_at: new Date(until.getTime() - windowMs) } });
  }

  private async ensureSlots(key: string, limit: number): Promise<void> {
    const marker = `${key}#${limit}`;
    if (this.initialised.has(marker)) return;
    const slots: SlotDoc[] = Array.from({ length: limit }, (_, slot) => ({ _id: `${key}#${slot}`, key, slot, used_at: new Date(0) }));
    try {
      await this.col.insertMany(slots, { ordered: false });
    } catch (err) {
      // Slots created earlier (by us or another worker) are fine; anything else is not.
      const code = (err as { code?: number }).code;
      const writeErrors = (err as { writeErrors?: Array<{ code?: number }> }).writeErrors;
      const allDuplicates = code === 11000 || (Array.isArray(writeErrors) && writeErrors.every((e) => e.code === 11000));
      if (!allDuplicates) throw err;
    }
    this.initialised.add(marker);
  }
}
