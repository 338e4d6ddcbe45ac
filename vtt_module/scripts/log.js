/** Console lines of the module, all prefixed `initiative-sidecar |`, and the one error base class. @module log */

const PREFIX = "initiative-sidecar |";

/** Log at info level. @param {...unknown} args */
export function info(...args) { console.info(PREFIX, ...args); }
/** Log at warn level. @param {...unknown} args */
export function warn(...args) { console.warn(PREFIX, ...args); }
/** Log at error level. @param {...unknown} args */
export function error(...args) { console.error(PREFIX, ...args); }
/** Log at debug level. @param {...unknown} args */
export function debug(...args) { console.debug(PREFIX, ...args); }

/** The base class of every error the module throws; `code` is stable. */
export class SidecarError extends Error {
  /** @param {string} code @param {string} message */
  constructor(code, message) {
    super(message);
    this.name = "SidecarError";
    this.code = code;
  }
}
