// The headers and body timeouts of upstream answers (http.ts's postJson and postForText), kept by one
// sweep of the answers on the wire instead of undici's timers. undici gives each request a timer for its
// headers and another for its body, and keeps a cleared one listed until its next tick, up to a
// second later: under load long enough to be copied and promoted by the young collector, so every
// plain call paid the collectors for two timers (2.5 to 5 % of a plain call's CPU, measured with
// `npm run bench -- --compare`). Here an answer is a deadline and two links in a list, and the
// sweep fails one past its deadline with undici's own error: never before its bound, and at most
// 2 × SWEEP_MS after it (undici's own timers of a second or more run up to a second late). A part of
// a body only marks its answer `heard`, and the sweep times it again from then: one clock read a
// sweep instead of one a part (a chat stream's parts come a few dozen to a socket read).
import { performance } from 'node:perf_hooks';

/** A deadline `ms` after `now`; none when `ms` is 0 (undici's meaning of a timeout of 0). */
const deadlineFrom = (now: number, ms: number): number => (ms > 0 ? now + ms : Number.POSITIVE_INFINITY);

/** A deadline `ms` from now; none when `ms` is 0. */
export const deadlineIn = (ms: number): number => deadlineFrom(performance.now(), ms);

/** How often the answers on the wire are looked at, while there are any. */
export const SWEEP_MS = 50;

/** An answer the watch times: it keeps its own deadline, and the list's links. */
export interface WatchedAnswer {
  /** performance.now() past which the answer has waited too long (Infinity: never). */
  deadline: number;
  /** Data came since the sweep last looked: the sweep sets the deadline `quietMs` on from then. */
  heard: boolean;
  /** How long the answer may be quiet after its data (its body timeout; 0: not timed). */
  readonly quietMs: number;
  /** Fails the answer with its phase's timeout error. */
  expire(): void;
  previous: WatchedAnswer | undefined;
  next: WatchedAnswer | undefined;
  watched: boolean;
}

export class AnswerWatch {
  private first: WatchedAnswer | undefined;
  private timer: NodeJS.Timeout | undefined;

  constructor(private readonly sweepMs = SWEEP_MS) {}

  watch(answer: WatchedAnswer): void {
    if (answer.watched) return;
    answer.watched = true;
    answer.previous = undefined;
    answer.next = this.first;
    if (this.first) this.first.previous = answer;
    this.first = answer;
    this.timer ??= setInterval(() => this.sweep(), this.sweepMs).unref();
  }

  unwatch(answer: WatchedAnswer): void {
    if (!answer.watched) return;
    answer.watched = false;
    if (answer.previous) answer.previous.next = answer.next;
    else this.first = answer.next;
    if (answer.next) answer.next.previous = answer.previous;
    // links cleared, so a finished answer keeps no other alive
    answer.previous = undefined;
    answer.next = undefined;
  }

  /** Fails every answer past its deadline; stops sweeping once none is left (the next watch starts again). */
  sweep(now = performance.now()): void {
    for (let answer = this.first; answer; ) {
      const next = answer.next;
      if (answer.heard) {
        answer.heard = false;
        answer.deadline = deadlineFrom(now, answer.quietMs);
      } else if (now >= answer.deadline) {
        this.unwatch(answer);
        answer.expire();
      }
      answer = next;
    }
    if (this.first === undefined && this.timer) {
      clearInterval(this.timer);
      this.timer = undefined;
    }
  }

  /** Answers on the wire now (for tests). */
  get size(): number {
    let count = 0;
    for (let answer = this.first; answer; answer = answer.next) count++;
    return count;
  }
}

/** The one watch of this process. */
export const answerWatch = new AnswerWatch();
