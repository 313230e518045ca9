import { tooLarge } from '../errors.js';
import type { WriteLimits } from '../storage/upload.js';

/**
 * `api.request_limit`: what one create request may bring in all, fields and files together. A declared
 * Content-Length over it is refused before the body is read; bodies sent without one are counted as
 * their parts arrive.
 */
export class RequestBudget {
  private used = 0;

  constructor(
    private readonly limit: number,
    private readonly uploadLimit: number,
  ) {}

  checkDeclared(contentLength: number | undefined): void {
    if (contentLength !== undefined && contentLength > this.limit) {
      throw tooLarge(`The request of ${contentLength} bytes is larger than the limit of ${this.limit} bytes (api.request_limit)`, {
        context: { contentLength, limit: this.limit },
      });
    }
  }

  take(bytes: number): void {
    this.used += bytes;
    if (this.used > this.limit) throw this.refusal();
  }

  /** Limits for the next file part: api.upload_limit, or less when the request's budget is nearly spent. */
  fileLimits(expectedMax: number | undefined): WriteLimits {
    const remaining = this.limit - this.used;
    if (remaining >= this.uploadLimit) return { limit: this.uploadLimit, expectedMax };
    return { limit: remaining, expectedMax, refusal: () => this.refusal() };
  }

  private refusal() {
    return tooLarge(`The request is larger than the limit of ${this.limit} bytes (api.request_limit)`, { context: { limit: this.limit } });
  }
}
