/** Console lines of the module, all prefixed `initiative-sidecar |`. @module log */

const PREFIX = "initiative-sidecar |";

/** Log at info level. @param {...unknown} args */
export function info(...args) { console.info(PREFIX, ...args); }
/** Log at warn level. @param {...unknown} args */
export function warn(...args) { console.warn(PREFIX, ...args); }
/** Log at error level. @param {...unknown} args */
export function error(...args) { console.error(PREFIX, ...args); }
