// The native layer on the real kernel: eventfd, epoll (struct layout included), the async wait and
// write, and errno turned into NativeError. Needs Linux but no privileges.

import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createLibcNativeEvents } from '../../native/libc-native-events.js';
import { EPOLLIN, type AnyFd } from '../../native/native-events.js';
import { NativeError } from '../../src/errors.js';
import { openFds } from '../helpers/open-fds.js';

const native = createLibcNativeEvents();
const skip = process.platform !== 'linux' ? 'not Linux' : null;
if (skip !== null) console.log(`skipping the native layer tests: ${skip}`);
const maybe = skip === null ? describe : describe.skip;

maybe('native layer (Linux)', () => {
  let baselineFds = 0;
  beforeAll(() => {
    // Load libc and koffi's own state before counting descriptors.
    native.close(native.createEventFd());
    baselineFds = openFds();
  });
  afterEach(() => expect(openFds()).toBe(baselineFds));

  test('an eventfd counter accumulates, a read returns and resets it, an empty read is 0', () => {
    const efd = native.createEventFd();
    native.signalEventFd(efd, 1n);
    native.signalEventFd(efd, 2n);
    expect(native.readEventFd(efd)).toBe(3n);
    expect(native.readEventFd(efd)).toBe(0n);
    native.close(efd);
  });

  test('epoll_wait off the main thread returns the token of the ready eventfd (struct layout)', async () => {
    const epoll = native.createEpoll();
    const quiet = native.createEventFd();
    const ready = native.createEventFd();
    // Tokens past 32 bits catch a wrong data offset in struct epoll_event.
    native.addToEpoll(epoll, quiet, EPOLLIN, 2 ** 40 + 1);
    native.addToEpoll(epoll, ready, EPOLLIN, 2 ** 40 + 7);
    const waiting = native.waitEpoll(epoll, 8, 5000);
    native.signalEventFd(ready, 1n);
    expect(await waiting).toEqual([{ token: 2 ** 40 + 7, events: EPOLLIN }]);
    native.removeFromEpoll(epoll, ready);
    for (const fd of [quiet, ready, epoll]) native.close(fd);
  });

  test('a wait times out with no events, and does not block the event loop meanwhile', async () => {
    const epoll = native.createEpoll();
    const efd = native.createEventFd();
    native.addToEpoll(epoll, efd, EPOLLIN, 1);
    const order: string[] = [];
    const waiting = native.waitEpoll(epoll, 4, 300).then((ready) => {
      order.push(`wait returned ${ready.length}`);
    });
    await new Promise((resolve) => setTimeout(resolve, 20));
    order.push('timer fired');
    await waiting;
    expect(order).toEqual(['timer fired', 'wait returned 0']);
    native.close(efd);
    native.close(epoll);
  });

  test('a write to the eventfd wakes an outstanding wait promptly', async () => {
    const epoll = native.createEpoll();
    const efd = native.createEventFd();
    native.addToEpoll(epoll, efd, EPOLLIN, 9);
    const waiting = native.waitEpoll(epoll, 4, 10_000);
    await new Promise((resolve) => setTimeout(resolve, 20));
    const startedMs = performance.now();
    native.signalEventFd(efd, 1n);
    expect(await waiting).toEqual([{ token: 9, events: EPOLLIN }]);
    expect(performance.now() - startedMs).toBeLessThan(100);
    native.close(efd);
    native.close(epoll);
  });

  test('writeFileAsync writes the whole buffer off the main thread', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'kea-native-'));
    try {
      const path = join(dir, 'out');
      // The native layer never creates files (no O_CREAT): make it first.
      writeFileSync(path, '');
      const fd = native.openFile(path, 'write');
      await native.writeFileAsync(fd, new TextEncoder().encode('12 34 5678\0'));
      native.close(fd);
      expect(readFileSync(path, 'utf8')).toBe('12 34 5678\0');
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  const errorCases: { name: string; call: () => unknown; syscall: string; errno: number; message: string }[] = [
    { name: 'close-of-a-bad-descriptor', call: () => native.close(-1 as AnyFd), syscall: 'close', errno: 9, message: 'close failed with errno 9: EBADF (fd -1)' },
    { name: 'open-of-a-missing-file', call: () => native.openFile('/nonexistent/kea', 'read'), syscall: 'open', errno: 2, message: 'open failed with errno 2: ENOENT (/nonexistent/kea)' },
    { name: 'read-of-a-bad-eventfd', call: () => native.readEventFd(-1 as never), syscall: 'read', errno: 9, message: 'read failed with errno 9: EBADF (eventfd -1)' },
  ];
  for (const tc of errorCases) {
    test(`errno becomes a NativeError: ${tc.name}`, () => {
      let thrown: unknown = null;
      try {
        tc.call();
      } catch (error) {
        thrown = error;
      }
      expect(thrown).toBeInstanceOf(NativeError);
      expect(thrown).toMatchObject({ code: 'EVA_ERR_NATIVE', syscall: tc.syscall, errno: tc.errno, message: tc.message });
    });
  }

  test('errno of an async call becomes a NativeError: epoll_wait on a bad descriptor', async () => {
    await expect(native.waitEpoll(-1 as never, 4, 0)).rejects.toMatchObject({ syscall: 'epoll_wait', errno: 9, message: 'epoll_wait failed with errno 9: EBADF (epoll fd -1)' });
  });

  test('errno of an async write becomes a NativeError', async () => {
    await expect(native.writeFileAsync(-1 as never, new Uint8Array([1]))).rejects.toMatchObject({ syscall: 'write', errno: 9 });
  });
});
