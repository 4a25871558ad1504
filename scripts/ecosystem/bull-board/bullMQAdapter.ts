// What a migrating application writes where it had Bull Board's BullMQAdapter: HopperAdapter, with
// Bull Board's actions on (`readOnlyMode: false`: HopperAdapter is read-only unless told, Bull
// Board's adapters are not) and Redis's server facts shown (`exposeServerInfo: true`: Bull Board
// shows them by default). Options a test passes (readOnlyMode: true, prefix, ...) still apply.
import { HopperAdapter, type HopperAdapterOptions } from 'hopper-queue-bull-board';

export class BullMQAdapter extends HopperAdapter {
  constructor(queue: ConstructorParameters<typeof HopperAdapter>[0], options: HopperAdapterOptions = {}) {
    super(queue, { readOnlyMode: false, exposeServerInfo: true, ...options });
  }
}
