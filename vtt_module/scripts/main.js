/**
 * Entry point of the Initiative Sidecar module (listed in module.json `esmodules`).
 * It only wires the module's hooks against Foundry's globals.
 */
import { wireModule } from "./wire.js";

wireModule(globalThis);
