/**
 * When to restart a daemon that crashed: 1 s, 2 s, 4 s ... up to 30 s; a daemon that stayed up
 * for a minute starts the count again; after `maxAttempts` crashes in a row, stop trying and say so.
 */

export interface BackoffOptions {
  initialMs: number;
  maxMs: number;
  maxAttempts: number;
  /** A run at least this long resets the count. */
  stableMs: number;
}

export const DEFAULT_BACKOFF: BackoffOptions = { initialMs: 1000, maxMs: 30_000, maxAttempts: 6, stableMs: 60_000 };

export class RestartBackoff {
  private attempts = 0;
  private startedAt: number | undefined;

  constructor(private readonly options: BackoffOptions = DEFAULT_BACKOFF) {}

  /** The daemon (re)started at `now`. */
  started(now: number): void {
    this.startedAt = now;
  }

  /** The daemon stopped at `now`: the delay before the next start, or undefined to give up. */
  crashed(now: number): number | undefined {
    if (this.startedAt !== undefined && now - this.startedAt >= this.options.stableMs) {
      this.attempts = 0;
    }
    this.startedAt = undefined;
    if (this.attempts >= this.options.maxAttempts) {
      return undefined;
    }
    const delay = Math.min(this.options.maxMs, this.options.initialMs * 2 ** this.attempts);
    this.attempts += 1;
    return delay;
  }

  get crashesInARow(): number {
    return this.attempts;
  }

  reset(): void {
    this.attempts = 0;
    this.startedAt = undefined;
  }
}
