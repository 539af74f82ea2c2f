// The exception MRI would raise, as JS sees it.

/** An exception MRI would raise: `rubyClass` names its class, `message` is MRI's text. */
export class NetHttpError extends Error {
  constructor(rubyClass, message) {
    super(message);
    this.name = 'NetHttpError';
    this.rubyClass = rubyClass;
  }
}
