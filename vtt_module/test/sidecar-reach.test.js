// Issue 26: the module says which case the GM is in instead of "not reachable" (a browser's
// Local Network Access denied or not yet given, an http:// public page, a refused origin, a
// wrong token, nothing listening), and a Sidecar URL may carry a path. The real-browser side
// of these cases: tests/server/test_setups_browser.py.
import { test, before, after } from "node:test";
import assert from "node:assert/strict";
import { readFileSync } from "node:fs";
import { addressSpace, refusalKey, socketTarget, whyUnreachable } from "../scripts/sidecar-reach.js";
import { wireModule } from "../scripts/wire.js";
import { SidecarProcess } from "./helpers/sidecar.js";
import { GM, newWorld, until } from "./helpers/table.js";

const lang = (name) => JSON.parse(readFileSync(new URL(`../lang/${name}.json`, import.meta.url), "utf8")).INITIATIVE_SIDECAR;

/**
 * A page as the browser shows it to the module: its address, secure or not, the permission's
 * state under the names this browser knows (Chrome 142: local-network-access; later also
 * loopback-network and local-network).
 */
function page(href, state, secure = href.startsWith("https:") || /\/\/(127\.|localhost)/.test(href),
  names = ["local-network-access"]) {
  const query = async ({ name }) => {
    if (state === undefined || !names.includes(name)) throw new TypeError(`'${name}' is not a valid PermissionName`);
    return { state: typeof state === "object" ? state[name] : state };
  };
  return { location: new URL(href), navigator: { permissions: { query } }, isSecureContext: secure };
}

test("a Sidecar URL with a path connects at that path's socket.io, without a path at /socket.io", () => {
  assert.deepEqual(socketTarget("https://foundry.example.org/initiative-sidecar"),
    { origin: "https://foundry.example.org", path: "/initiative-sidecar/socket.io" });
  assert.deepEqual(socketTarget("https://foundry.example.org/vtt/initiative-sidecar/"),
    { origin: "https://foundry.example.org", path: "/vtt/initiative-sidecar/socket.io" });
  assert.deepEqual(socketTarget("http://127.0.0.1:8765"), { origin: "http://127.0.0.1:8765", path: "/socket.io" });
});

test("address spaces: loopback, private (RFC 1918, link-local, .local, ULA), else public", () => {
  for (const h of ["127.0.0.1", "127.8.9.10", "localhost", "app.localhost", "[::1]"]) assert.equal(addressSpace(h), 0, h);
  for (const h of ["10.0.0.5", "172.16.0.1", "172.31.255.1", "192.168.1.20", "169.254.1.1", "gm-pc.local", "[fd00::1]"]) assert.equal(addressSpace(h), 1, h);
  for (const h of ["172.32.0.1", "8.8.8.8", "foundry.example.org", "gm-table.forge-vtt.com", "[2001:db8::1]"]) assert.equal(addressSpace(h), 2, h);
});

test("a public https page whose local-network permission was denied is told so", async () => {
  assert.equal(await whyUnreachable("http://127.0.0.1:8765", page("https://foundry.example.org/game", "denied")), "local_network_denied");
  assert.equal(await whyUnreachable("http://192.168.1.20:8765", page("https://gm.forge-vtt.com/game", "denied")), "local_network_denied");
});

test("where the permission is split, the one for the sidecar's address space is read", async () => {
  const names = ["local-network-access", "loopback-network", "local-network"];
  const split = { "local-network-access": "granted", "loopback-network": "denied", "local-network": "granted" };
  const https = (state) => page("https://foundry.example.org/game", state, true, names);
  assert.equal(await whyUnreachable("http://127.0.0.1:8765", https(split)), "local_network_denied");
  assert.equal(await whyUnreachable("http://192.168.1.20:8765", https(split)), "unreachable");
  assert.equal(await whyUnreachable("http://192.168.1.20:8765", https({ ...split, "local-network": "prompt" })), "local_network_prompt");
});

test("a public https page the browser is still asking about is told to answer the prompt", async () => {
  assert.equal(await whyUnreachable("http://127.0.0.1:8765", page("https://foundry.example.org/game", "prompt")), "local_network_prompt");
});

test("an http:// page on a public address reaching loopback is the insecure-page case", async () => {
  const insecure = page("http://foundry.example.org:30000/game", "denied", false);
  assert.equal(await whyUnreachable("http://127.0.0.1:8765", insecure), "insecure_page");
});

test("nothing listening: where Local Network Access cannot be the cause, or the permission is granted or unknown", async () => {
  const cases = [
    ["http://127.0.0.1:8765", page("http://localhost:30000/game", "prompt")],            // loopback to loopback
    ["http://192.168.1.20:8765", page("http://192.168.1.20:30000/game", "denied", false)], // private to private
    ["https://sidecar.example.net", page("https://gm.forge-vtt.com/game", "denied")],      // to a public address
    ["https://foundry.example.org/initiative-sidecar", page("https://foundry.example.org/game", "prompt")], // same origin
    ["http://127.0.0.1:8765", page("https://foundry.example.org/game", "granted")],
    ["http://127.0.0.1:8765", page("https://foundry.example.org/game", undefined)],      // Firefox, Safari
    ["http://127.0.0.1:8765", {}],                                                       // Node, no page
    ["not a url", page("https://foundry.example.org/game", "denied")]
  ];
  for (const [url, where] of cases) assert.equal(await whyUnreachable(url, where), "unreachable", `${url} from ${where.location?.href}`);
});

test("every case has its text in English and Russian, naming the URL and, where it matters, the page's origin", () => {
  for (const name of ["en", "ru"]) {
    const reach = lang(name).reach;
    for (const reason of ["local_network_denied", "local_network_prompt", "insecure_page", "unreachable", "auth_failed", "origin_refused"]) {
      assert.match(reach[reason], /\{url\}/, `${name} ${reason}`);
      assert.ok(!/not reachable|недоступен/.test(reach[reason]), `${name} ${reason} says which case, not just "not reachable"`);
    }
    for (const reason of ["local_network_denied", "local_network_prompt", "insecure_page", "origin_refused"]) assert.match(reach[reason], /\{origin\}/);
  }
  assert.equal(refusalKey("auth_failed"), "INITIATIVE_SIDECAR.reach.auth_failed");
  assert.equal(refusalKey("origin_refused"), "INITIATIVE_SIDECAR.reach.origin_refused");
  assert.equal(refusalKey("invalid_auth"), undefined, "shown with the sidecar's own message");
});

let sidecar;
before(async () => { sidecar = await new SidecarProcess().start(); });
after(async () => { await sidecar?.stop(); });

function bootGM(world, url, token) {
  world.worldSettings.set("initiative-sidecar.ruleset", "foundry-core");
  const gm = world.connect(GM, { storage: new Map([[`initiative-sidecar.token-${world.id}`, token], [`initiative-sidecar.url-${world.id}`, url]]) });
  gm.module = wireModule(gm.env);
  gm.boot();
  return gm;
}

test("a wrong token is shown as a wrong token, not as 'not reachable'", async () => {
  const gm = bootGM(newWorld({ id: "reach-wrong-token" }), sidecar.url, "not-the-token");
  await until(() => gm.notifications.some((n) => n.level === "error"), { what: "the refusal shown" });
  const shown = gm.notifications.find((n) => n.level === "error").message;
  assert.equal(shown, lang("en").reach.auth_failed.replaceAll("{url}", sidecar.url));
  assert.equal(gm.module.state.sidecar.status, "refused");
  gm.module.state.sidecar.stop();
});

test("nothing listening says so, naming the URL", async () => {
  const url = "http://127.0.0.1:9"; // discard: nothing listens there
  const gm = bootGM(newWorld({ id: "reach-nothing" }), url, sidecar.token);
  await until(() => gm.notifications.some((n) => n.level === "warn"), { what: "the warning shown" });
  const shown = gm.notifications.find((n) => n.level === "warn").message;
  assert.equal(shown, lang("en").reach.unreachable.replaceAll("{url}", url));
  gm.module.state.sidecar.stop();
});
