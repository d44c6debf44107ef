// The storm guard's pure decisions on a virtual clock: the per-node soft-eviction budget (hard
// evictions never held, each pod counted once), owners past their threshold reported once a window,
// the cool-down, and the owner found by the names.

import type { StormGuardSettings } from '../../../src/api/agent-settings.js';
import { controllerOf, deploymentByName, ownerByName } from '../../../src/eviction/owner.js';
import { describeStormGuard, formatWindow, StormGuard, type GuardedEviction } from '../../../src/eviction/storm-guard.js';
import { makePod } from '../../fixtures/pods.js';

const MIN = 60_000;
const settings = (budget: number, threshold: number, coolDownMs = 0): StormGuardSettings => ({
  softEvictionBudget: { maxEvictions: budget, windowMs: 10 * MIN },
  owners: { eventThreshold: threshold, windowMs: 10 * MIN, taintCoolDownMs: coolDownMs },
});
const deployment = { apiVersion: 'apps/v1', kind: 'Deployment', namespace: 'shop', name: 'leaky', uid: null };
const eviction = (n: number, hard = false, owner: GuardedEviction['owner'] = deployment): GuardedEviction => ({ pod: `shop/leaky-${n}`, uid: `uid-${n}`, signal: 'memory.available', resource: 'memory', hard, owner });

describe('the soft-eviction budget', () => {
  test('past the budget a soft eviction is held until the oldest leaves the window; the first hold says so', () => {
    const guard = new StormGuard(settings(2, 0), 'node-a');
    expect(guard.admit(eviction(1), 0)).toEqual({ admit: true });
    guard.record([eviction(1)], 0);
    guard.record([eviction(2)], 3 * MIN);
    const held = guard.admit(eviction(3), 4 * MIN);
    expect(held).toMatchObject({ admit: false, used: 2, max: 2, nextAllowedAtMs: 10 * MIN, firstHold: true });
    expect(held.admit ? '' : held.message).toBe(
      'Soft eviction of shop/leaky-3 for memory.available held back: 2 soft evictions from node node-a in the last 10 minutes reached the budget of 2; the next is allowed in 6 minutes. Hard evictions are not held back.',
    );
    expect(guard.admit(eviction(3), 5 * MIN)).toMatchObject({ admit: false, firstHold: false });
    expect(guard.state(5 * MIN).budget).toEqual({ used: 2, max: 2, windowMs: 10 * MIN, nextAllowedAtMs: 10 * MIN });
    // The pod already counted (a retry, a repeated dry-run decision) is not a new eviction.
    expect(guard.admit(eviction(2), 5 * MIN)).toEqual({ admit: true });
    expect(guard.admit(eviction(3), 10 * MIN)).toEqual({ admit: true });
    guard.record([eviction(3)], 10 * MIN);
    expect(guard.admit(eviction(4), 11 * MIN)).toMatchObject({ admit: false, firstHold: true });
  });

  test('hard evictions are never held back and never counted; a budget of 0 holds nothing', () => {
    const guard = new StormGuard(settings(1, 0), 'node-a');
    guard.record([eviction(1)], 0);
    expect(guard.admit(eviction(2, true), MIN)).toEqual({ admit: true });
    guard.record([eviction(2, true)], MIN);
    expect(guard.state(MIN).budget?.used).toBe(1);
    const off = new StormGuard(settings(0, 0), 'node-a');
    for (let i = 0; i < 50; i++) off.record([eviction(i)], i);
    expect(off.admit(eviction(99), 60)).toEqual({ admit: true });
    expect(off.state(60).budget).toBeNull();
  });
});

describe('owners', () => {
  test('reported once at the threshold, again only a window later; bare pods are not counted', () => {
    const guard = new StormGuard(settings(0, 3), 'node-a');
    expect(guard.record([eviction(1)], 0)).toEqual([]);
    expect(guard.record([eviction(2), eviction(9, false, null)], MIN)).toEqual([]);
    const [storm] = guard.record([eviction(3)], 2 * MIN);
    expect(storm).toMatchObject({ count: 3, coolDownUntilMs: null, message: '3 pods of Deployment shop/leaky evicted from node node-a for memory in the last 10 minutes' });
    expect(guard.record([eviction(4)], 3 * MIN)).toEqual([]);
    expect(guard.state(3 * MIN).owners).toEqual([{ owner: deployment, count: 4 }]);
    // 12 minutes: a window after the report, the first three left it; the storm is still at 3.
    guard.record([eviction(5)], 11 * MIN);
    expect(guard.record([eviction(6)], 12 * MIN).map((s) => s.count)).toEqual([3]);
  });

  test('a cool-down holds the taint from the storm on; a later lookup with the UID replaces the name-only owner', () => {
    const guard = new StormGuard(settings(0, 2, 30 * MIN), 'node-a');
    guard.record([eviction(1)], 0);
    const known = { ...deployment, uid: 'uid-deploy' };
    const [storm] = guard.record([eviction(2, false, known)], MIN);
    expect(storm?.owner).toEqual(known);
    expect(storm?.message).toBe('2 pods of Deployment shop/leaky evicted from node node-a for memory in the last 10 minutes; the node keeps its pressure taint for 30 minutes');
    expect(guard.taintHeldUntilMs(30 * MIN)).toBe(31 * MIN);
    expect(guard.taintHeldUntilMs(31 * MIN)).toBeNull();
  });

  test('the history stays bounded: what left the window is forgotten', () => {
    const guard = new StormGuard(settings(5, 3), 'node-a');
    for (let i = 0; i < 1000; i++) guard.record([eviction(i, false, { ...deployment, name: `d${i}` })], i * MIN);
    const state = guard.state(1000 * MIN);
    // One eviction a minute: what a 10-minute window holds, whatever ran before.
    expect(state.owners.length).toBeLessThanOrEqual(10);
    expect(state.budget?.used).toBeLessThanOrEqual(10);
  });
});

test('owner by the names: a ReplicaSet named <deployment>-<pod-template-hash> is its Deployment; other controllers as they are', () => {
  const pod = makePod({ name: 'leaky-7c9d8-x2x', namespace: 'shop' });
  pod.metadata.labels = { 'pod-template-hash': '7c9d8' };
  pod.metadata.ownerReferences = [{ apiVersion: 'apps/v1', kind: 'ReplicaSet', name: 'leaky-7c9d8', uid: 'uid-rs', controller: true }];
  expect(ownerByName(pod)).toEqual(deployment);
  const rs = controllerOf(pod);
  expect(rs).toEqual({ apiVersion: 'apps/v1', kind: 'ReplicaSet', namespace: 'shop', name: 'leaky-7c9d8', uid: 'uid-rs' });
  // A ReplicaSet not named after the hash is its own owner.
  pod.metadata.labels = { 'pod-template-hash': 'other' };
  expect(deploymentByName(pod, rs!)).toBeNull();
  expect(ownerByName(pod)).toEqual(rs);
  const job = makePod({ name: 'batch-1', namespace: 'shop' });
  job.metadata.ownerReferences = [{ apiVersion: 'batch/v1', kind: 'Job', name: 'batch', uid: 'uid-job', controller: true }];
  expect(ownerByName(job)?.kind).toBe('Job');
  // Not the controller: not an owner.
  job.metadata.ownerReferences = [{ apiVersion: 'batch/v1', kind: 'Job', name: 'batch', uid: 'uid-job' }];
  expect(ownerByName(job)).toBeNull();
});

test.each([
  [600_000, '10 minutes'],
  [3_600_000, '1 hour'],
  [90_000, '90 seconds'],
  [60_000, '1 minute'],
  [1_500, '2 seconds'],
])('formatWindow(%d) is %s', (ms, text) => expect(formatWindow(ms)).toBe(text));

test('the settings in one sentence', () => {
  expect(describeStormGuard(settings(0, 3))).toBe('no soft-eviction budget; a Warning Event on an owner with 3 or more pods evicted in 10 minutes; no taint cool-down');
  expect(describeStormGuard(settings(1, 0, 3_600_000))).toBe('at most 1 soft eviction per 10 minutes (hard evictions never held back); no owner Events; the pressure taint kept for 1 hour after such a storm');
});
