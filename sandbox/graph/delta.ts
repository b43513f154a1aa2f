/**
 * Delta listings.
 *
 * A listing is an ordered list of item indices fixed when its first page is served:
 *   - enumeration (no token): the live tree in pre-order at that moment (root first,
 *     parents before children);
 *   - changes (a deltaLink token at seq S): the items changed after S, sorted by depth.
 * Its pages are served from that fixed list (a nextLink pins list + offset), so changes
 * made while a client pages neither duplicate nor skip items; each item is sent in its
 * state at the time of the page, and the final deltaLink is the seq the listing was cut
 * at, so everything changed after the cut comes again in the next delta.
 * Items deleted after the cut: skipped by an enumeration, sent as tombstones by a change
 * listing (either way the next delta reports the deletion).
 */

export interface DeltaListing {
  driveIndex: number;
  list: Int32Array;
  /** Store seq the listing was cut at: the deltaLink after its last page. */
  endSeq: number;
  /** Change listings: the token's seq (changes after it); 0 for enumerations. */
  since: number;
  enumerate: boolean;
  /** Token epoch it was issued in (expireDeltaTokens() invalidates older ones). */
  epoch: number;
}

/**
 * Listings that still have pages to serve, by id, least recently used first. Bounded: an
 * evicted listing is rebuilt from its nextLink when the drive has not changed since its
 * cut; otherwise its nextLink answers 410 resync, as an expired server-side cursor would.
 */
export class DeltaListings {
  private readonly byId = new Map<number, DeltaListing>();
  private nextId = 1;

  constructor(private readonly max = 32) {}

  add(listing: DeltaListing): number {
    const id = this.nextId++;
    this.byId.set(id, listing);
    while (this.byId.size > this.max) this.byId.delete(this.byId.keys().next().value as number);
    return id;
  }

  /** Re-inserts a rebuilt listing under its old id. */
  put(id: number, listing: DeltaListing): void {
    this.byId.set(id, listing);
    while (this.byId.size > this.max) this.byId.delete(this.byId.keys().next().value as number);
  }

  get(id: number): DeltaListing | undefined {
    const l = this.byId.get(id);
    if (l) {
      this.byId.delete(id);
      this.byId.set(id, l);
    }
    return l;
  }

  clear(): void {
    this.byId.clear();
  }
}

export interface DeltaPage {
  items: number[];
  /** Offset of the next page, or null when this is the last page. */
  next: number | null;
}

/** Takes up to `top` entries from `offset`; an enumeration skips items deleted since the cut. */
export function takePage(listing: DeltaListing, offset: number, top: number, isLive: (i: number) => boolean): DeltaPage {
  const items: number[] = [];
  const list = listing.list;
  let pos = offset;
  while (pos < list.length && items.length < top) {
    const i = list[pos++];
    if (listing.enumerate && !isLive(i)) continue;
    items.push(i);
  }
  return { items, next: pos < list.length ? pos : null };
}
