/**
 * At most `max` tasks in flight; the rest wait their turn in order. Hand-written (a dozen
 * lines) because the maintained package for this, p-limit, is ESM-only since v4 and this
 * project compiles to CommonJS.
 */
export class Limiter {
  private active = 0;
  private readonly waiting: Array<() => void> = [];

  constructor(private readonly max: number) {}

  async run<T>(task: () => Promise<T>): Promise<T> {
    // A finishing task hands its slot straight to the next waiter, so no newcomer can
    // slip in between and exceed the limit.
    if (this.active >= this.max) await new Promise<void>((resolve) => this.waiting.push(resolve));
    else this.active += 1;
    try {
      return await task();
    } finally {
      const next = this.waiting.shift();
      if (next) next();
      else this.active -= 1;
    }
  }

  all<T, R>(items: readonly T[], task: (item: T) => Promise<R>): Promise<R[]> {
    return Promise.all(items.map((item) => this.run(() => task(item))));
  }
}
