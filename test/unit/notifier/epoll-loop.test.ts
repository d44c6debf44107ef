// The single epoll set with its wake-up eventfd and one outstanding wait, on the simulated kernel:
// dispatch, unwatch, failures that must leave nothing open, timeouts and stop.

import { flushMicrotasks } from '../../fakes/fake-clock.js';
import { EEXIST, EMFILE, FakeNative } from '../../fakes/fake-native.js';
import { RecordingLogger } from '../../fakes/recording-logger.js';
import { EPOLLIN } from '../../../native/native-events.js';
import { EpollLoop } from '../../../src/notifier/epoll-loop.js';

describe('EpollLoop', () => {
  test('one epoll set plus a wake-up eventfd; a watched eventfd is dispatched to its handler', async () => {
    const native = new FakeNative();
    const loop = new EpollLoop(native, new RecordingLogger());
    const efd = native.createEventFd();
    const seen: number[] = [];
    loop.watch(efd, EPOLLIN, (events) => {
      seen.push(events);
      native.readEventFd(efd);
    });
    loop.start();
    loop.start();
    await flushMicrotasks();
    native.signalEventFd(efd, 1n);
    await flushMicrotasks();
    expect(seen).toEqual([EPOLLIN]);
    expect(native.maxOutstandingWaits).toBe(1);
    await loop.stop();
    expect(native.openFdCount).toBe(0);
  });

  test('unwatch removes and closes the descriptor; a second unwatch is a no-op', async () => {
    const native = new FakeNative();
    const loop = new EpollLoop(native, new RecordingLogger());
    const watch = loop.watch(native.createEventFd(), EPOLLIN, () => {});
    expect(loop.watchCount).toBe(1);
    loop.unwatch(watch);
    loop.unwatch(watch);
    expect(loop.watchCount).toBe(0);
    expect(native.openFdCount).toBe(2);
    await loop.stop();
  });

  test('a descriptor that cannot be added is closed and the error thrown', async () => {
    const native = new FakeNative();
    const loop = new EpollLoop(native, new RecordingLogger());
    native.failNext('addToEpoll', EEXIST);
    expect(() => loop.watch(native.createEventFd(), EPOLLIN, () => {})).toThrow('epoll_ctl failed with errno 17');
    expect(native.openFdCount).toBe(2);
    await loop.stop();
  });

  test('creation failures leave nothing open', () => {
    const native = new FakeNative();
    native.failNext('createEventFd', EMFILE);
    expect(() => new EpollLoop(native, new RecordingLogger())).toThrow('eventfd failed with errno 24');
    expect(native.openFdCount).toBe(0);
    native.failNext('addToEpoll', EMFILE);
    expect(() => new EpollLoop(native, new RecordingLogger())).toThrow('epoll_ctl failed with errno 24');
    expect(native.openFdCount).toBe(0);
  });

  test('a timed-out wait is simply issued again', async () => {
    const native = new FakeNative();
    const loop = new EpollLoop(native, new RecordingLogger());
    loop.start();
    await flushMicrotasks();
    native.expireWaits();
    await flushMicrotasks();
    expect(native.waitCalls).toBe(2);
    expect(native.outstandingWaits).toBe(1);
    await loop.stop();
    expect(native.outstandingWaits).toBe(0);
  });

  test('watching after stop is refused and the descriptor closed', async () => {
    const native = new FakeNative();
    const loop = new EpollLoop(native, new RecordingLogger());
    await loop.stop();
    expect(() => loop.watch(native.createEventFd(), EPOLLIN, () => {})).toThrow('the epoll loop is stopped');
    expect(native.openFdCount).toBe(0);
  });
});
