// What a migrating application writes where it had Bull Board's BullMQAdapter: HopperAdapter, with
// Bull Board's actions on (`readOnlyMode: false`: HopperAdapter is read-only unless told, Bull
// Board's adapters are not) and Redis's server facts shown (`exposeServerInfo: true`: Bull Board
// shows them by default). Options a test passes (readOnlyMode: true, prefix, ...) still apply.
// Redaction stays on, as it is by default.
const { HopperAdapter } = require('hopper-queue-bull-board');

class BullMQAdapter extends HopperAdapter {
  constructor(queue, options = {}) {
    super(queue, { readOnlyMode: false, exposeServerInfo: true, ...options });
  }
}

module.exports = { BullMQAdapter };
