/**
 * A FlowProducer closed before its connection is up stays silent, as BullMQ's does (it printed
 * `[hopper] FlowProducer: Error: Connection is closed.`, e.g. in every Nest test module that
 * registers a flow producer and closes at once).
 */
import { afterEach, describe, expect, it, vi } from 'vitest';
import { FlowProducer } from '../../src/index.js';
import { useHopper } from '../helpers/hopper.js';

const env = useHopper();

afterEach(() => {
  vi.restoreAllMocks();
});

describe('FlowProducer: closed before it connects', () => {
  it('reports nothing: no error event, nothing printed', async () => {
    const printed = vi.spyOn(console, 'error');
    const errors: unknown[] = [];
    const unheard = new FlowProducer({ connection: env.url, prefix: env.prefix });
    const heard = new FlowProducer({ connection: env.url, prefix: env.prefix });
    heard.on('error', (error) => errors.push(error));
    await Promise.all([unheard.close(), heard.close()]);
    // Wait for the starts the close cut short to settle (the constructor's handler runs first).
    // The private start attempt under way (bracket access), only to wait for it.
    await Promise.all([unheard, heard].map((flows) => flows['starter']['pending']?.catch(() => undefined) ?? Promise.resolve()));
    expect(printed.mock.calls.filter((args) => String(args[0]).includes('[hopper] FlowProducer'))).toEqual([]);
    expect(errors).toEqual([]);
  });
});
