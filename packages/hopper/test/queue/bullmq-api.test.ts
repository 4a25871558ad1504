/**
 * Members of BullMQ's public API added for drop-in compatibility (issue 13): each is checked
 * here against Hopper's own behaviour; BullMQ's suite is the oracle for the exact semantics.
 */
import { describe, expect, it } from 'vitest';
import { useHopper } from '../helpers/hopper.js';

const env = useHopper();

describe('BullMQ API: queue naming', () => {
  it('qualifiedName is <prefix>:<name> and toKey(id) is the public key job.parentKey and getChildrenValues use', async () => {
    const parentQ = env.queueName('parents');
    const childQ = env.queueName('children');
    const parents = env.queue(parentQ);
    const children = env.queue(childQ);
    expect(parents.qualifiedName).toBe(`${env.prefix}:${parentQ}`);
    expect(children.toKey('7')).toBe(`${env.prefix}:${childQ}:7`);
    const node = await env.flows().add({
      name: 'parent',
      queueName: parentQ,
      children: [{ name: 'child', queueName: childQ, data: {} }],
    });
    const child = node.children![0].job;
    expect(child.parentKey).toBe(parents.toKey(node.job.id!));
    expect(child.queueQualifiedName).toBe(children.qualifiedName);
    const deps = await node.job.getDependencies();
    expect(deps.unprocessed).toEqual([children.toKey(child.id!)]);
  });
});
