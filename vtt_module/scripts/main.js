/** Entry point of the Initiative Sidecar module (module.json `esmodules`): wires its hooks against Foundry's globals. */
import { wireModule } from "./wire.js";

wireModule(globalThis);
