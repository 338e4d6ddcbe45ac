/**
 * Why the sidecar could not be reached, as far as the page can tell (docs/setups.md). A browser
 * tells a page only that a connection failed; Chromium's Local Network Access (a page may reach
 * a more local address than its own only with the user's permission, asked on https pages
 * only) is told apart by the address spaces of the page and the sidecar and by the permission's
 * state, where the browser knows it. Pure but for the `page` given (location, navigator).
 * @module sidecar-reach
 */

/**
 * What `io()` takes for a "Sidecar URL" setting, which may carry a path (a sidecar served
 * under Foundry's own address, `https://foundry.example.org/initiative-sidecar`): its origin,
 * and the socket.io path under that path (a path in io()'s URL would name a namespace).
 */
export function socketTarget(url) {
  try {
    const parsed = new URL(url);
    return { origin: parsed.origin, path: `${parsed.pathname.replace(/\/+$/, "")}/socket.io` };
  } catch {
    return { origin: url, path: "/socket.io" };
  }
}

/** Address spaces, most local first (a request to a lower one needs the permission). */
const LOOPBACK = 0, PRIVATE = 1, PUBLIC = 2;

/** The address space of a host name or literal address (a DNS name counts as public). */
export function addressSpace(hostname) {
  const host = String(hostname ?? "").toLowerCase().replace(/^\[|\]$/g, "").replace(/\.$/, "");
  if (host === "localhost" || host.endsWith(".localhost") || host === "::1" || /^127\.\d+\.\d+\.\d+$/.test(host)) return LOOPBACK;
  if (host.endsWith(".local") || /^(fc|fd|fe[89ab])[0-9a-f]*:/.test(host)) return PRIVATE;
  const ip = host.match(/^(\d+)\.(\d+)\.\d+\.\d+$/);
  if (!ip) return PUBLIC;
  const [a, b] = [Number(ip[1]), Number(ip[2])];
  const isPrivate = a === 10 || (a === 172 && b >= 16 && b <= 31) || (a === 192 && b === 168) || (a === 169 && b === 254) || (a === 100 && b >= 64 && b <= 127);
  return isPrivate ? PRIVATE : PUBLIC;
}

/** The text of a connect refusal that has its own (others show the sidecar's message), or undefined. */
export function refusalKey(code) {
  return code === "auth_failed" || code === "origin_refused" ? `INITIATIVE_SIDECAR.reach.${code}` : undefined;
}

/**
 * The state of the permission that lets the page reach `space`, or null where the browser does
 * not know it. Chromium split `local-network-access` (Chrome 142) into `loopback-network` and
 * `local-network`; the older name is asked where the newer is unknown.
 */
export async function localNetworkPermission(navigator, space = LOOPBACK) {
  for (const name of [space === LOOPBACK ? "loopback-network" : "local-network", "local-network-access"]) {
    try {
      return (await navigator.permissions.query({ name })).state;
    } catch { /* a name this browser does not know */ }
  }
  return null;
}

/**
 * Why a connection to `url` failed: `local_network_denied`, `local_network_prompt` (not given
 * yet), `insecure_page` (an http:// page cannot even ask), or `unreachable` (nothing answers).
 * @param {string} url the sidecar's URL @param {{location?:Location, navigator?:Navigator, isSecureContext?:boolean}} page
 */
export async function whyUnreachable(url, page = globalThis) {
  let target;
  try { target = new URL(url).hostname; } catch { return "unreachable"; }
  const from = page.location?.hostname;
  const space = addressSpace(target);
  if (from === undefined || space >= addressSpace(from)) return "unreachable";
  const state = page.navigator ? await localNetworkPermission(page.navigator, space) : null;
  if (state === null || state === "granted") return "unreachable";
  if (page.isSecureContext === false) return "insecure_page";
  return state === "denied" ? "local_network_denied" : "local_network_prompt";
}
