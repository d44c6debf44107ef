// The Evicted Event's usage figure, read as the kubelet prints it.

import { offendingUsageBytes } from './objects.js';

const event = (usage?: string): Parameters<typeof offendingUsageBytes>[0] => ({ metadata: { name: 'e', namespace: 'n', ...(usage === undefined ? {} : { annotations: { offending_containers_usage: usage } }) } });

describe('offendingUsageBytes', () => {
  test.each([
    ['327684Ki', 327684 * 1024],
    // A figure that is a whole number of MiB prints in Mi (about one page-multiple figure in 256).
    ['320Mi', 320 * 1024 * 1024],
    ['1Gi', 1024 * 1024 * 1024],
  ])('%s is %d bytes', (usage, bytes) => {
    expect(offendingUsageBytes(event(usage))).toBe(bytes);
  });

  test('no figure, or one that is not a quantity, is NaN', () => {
    expect(offendingUsageBytes(event())).toBeNaN();
    expect(offendingUsageBytes(undefined)).toBeNaN();
    expect(offendingUsageBytes(event('a lot'))).toBeNaN();
  });
});
