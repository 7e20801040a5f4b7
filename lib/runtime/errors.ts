/** Raised by a function whose behaviour has not been built yet, so that no caller mistakes it for success. */
export class NotImplementedError extends Error {
  override readonly name = 'NotImplementedError';
  constructor(what: string, tracking: string) {
    super(`${what} is not implemented yet (${tracking}); nothing was processed.`);
  }
}
