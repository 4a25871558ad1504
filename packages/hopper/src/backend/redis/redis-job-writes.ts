/**
 * The Redis backend's writes to one job's own records, each one fenced script call: progress,
 * data, log lines, durable steps, the turns and costs of runs (`continueWith`, `reportCost`), and
 * the tenant budget reads beside them. Script codes become the seam's WriteCode here (replies.ts).
 */
import { randomBytes } from 'node:crypto';
import {
  WriteCode,
  type ContinueResult,
  type Fence,
  type LogWriteResult,
  type NewJob,
  type RunRecord,
  type StepRecord,
  type StepWrite,
} from '../backend.js';
import { continued, decodeStep, encodeStep } from '../step-records.js';
import { RedisQueueOutput } from './redis-output.js';
import { timeArg, toLogWriteResult, toWriteCode } from './replies.js';
import { runScript } from './script-runner.js';
import { SCRIPTS } from './scripts.generated.js';

/** A layer of RedisQueueBackend: the writes to one job's own records. */
export abstract class RedisQueueJobWrites extends RedisQueueOutput {
  /** This backend's id and call counter for addLog (re-sent calls are applied once). */
  private readonly logClient = randomBytes(6).toString('base64url');
  private logSeq = 0;

  async updateProgress(id: string, progress: string, fence: Fence | undefined): Promise<WriteCode> {
    const code = await runScript(
      this.client,
      SCRIPTS.updateProgress,
      { meta: this.keys.meta, events: this.keys.events },
      { base: this.keys.base, id, progress, token: fence?.token ?? '', attempt: fence?.attempt ?? '' },
    );
    return toWriteCode(code, 'updateProgress');
  }

  async updateData(id: string, data: string, fence: Fence | undefined): Promise<WriteCode> {
    const code = await runScript(
      this.client,
      SCRIPTS.updateData,
      { job: this.keys.job(id), data: this.keys.data(id) },
      { base: this.keys.base, id, data, token: fence?.token ?? '', attempt: fence?.attempt ?? '' },
    );
    return toWriteCode(code, 'updateData');
  }

  async recordStep(
    id: string,
    key: string,
    step: StepWrite,
    fence: Fence | undefined,
  ): Promise<{ code: WriteCode; stored: StepRecord | undefined }> {
    const [code, stored] = (await runScript(
      this.client,
      SCRIPTS.recordStep,
      { job: this.keys.job(id), steps: this.keys.steps(id) },
      {
        base: this.keys.base,
        id,
        token: fence?.token ?? '',
        attempt: fence?.attempt ?? '',
        key,
        record: encodeStep(step),
        ok: step.ok ? 1 : 0,
      },
    )) as [number, string];
    return { code: toWriteCode(code, 'recordStep'), stored: stored === '' ? undefined : decodeStep(stored) };
  }

  async continueJob(
    id: string,
    fence: Fence | undefined,
    stepKey: string,
    next: NewJob,
    now: number | undefined,
    run: { id: string; maxCost?: number },
  ): Promise<ContinueResult> {
    const k = this.keys;
    const [code, reply] = (await runScript(
      this.client,
      SCRIPTS.continueJob,
      {
        meta: k.meta,
        wait: k.wait,
        prio: k.prio,
        prioCounter: k.prioCounter,
        events: k.events,
        marker: k.marker,
        delayed: k.delayed,
        run: k.run(run.id),
      },
      {
        now: timeArg(now),
        base: k.base,
        id,
        token: fence?.token ?? '',
        attempt: fence?.attempt ?? '',
        stepKey,
        nextId: next.customId,
        name: next.name,
        data: next.data,
        opts: next.opts,
        priority: next.priority,
        delay: next.delay,
        lifo: next.lifo ? 1 : 0,
        runId: run.id,
        maxCost: run.maxCost ?? '',
      },
    )) as [number, string];
    const written = toWriteCode(code, 'continueJob');
    return written === WriteCode.Done ? continued(decodeStep(reply)) : { code: written, nextId: undefined, detail: reply };
  }

  async reportCost(
    id: string,
    runId: string,
    cost: number,
    fence: Fence | undefined,
  ): Promise<{ code: WriteCode; runCost: number | undefined }> {
    const [code, total] = (await runScript(
      this.client,
      SCRIPTS.reportCost,
      { job: this.keys.job(id), run: this.keys.run(runId) },
      { base: this.keys.base, id, token: fence?.token ?? '', attempt: fence?.attempt ?? '', cost },
    )) as [number, string];
    return { code: toWriteCode(code, 'reportCost'), runCost: total === '' ? undefined : Number(total) };
  }

  async getBudgetUse(tenant: string, windowMs: number, now?: number): Promise<number> {
    const use = await runScript(
      this.client,
      SCRIPTS.readBudget,
      { window: this.keys.budgetWindow(tenant), sum: this.keys.budgetSum(tenant) },
      { now: timeArg(now), duration: windowMs },
    );
    return Number(use);
  }

  async cancelRun(runId: string, reason: string): Promise<string | undefined> {
    const last = (await runScript(this.client, SCRIPTS.cancelRun, { run: this.keys.run(runId) }, { reason })) as string;
    return last === '' ? undefined : last;
  }

  async getRun(runId: string): Promise<RunRecord | undefined> {
    const [last, cost, reason] = await this.client.hmget(this.keys.run(runId), 'l', 'c', 'cr');
    if (last === null && cost === null && reason === null) return undefined;
    return { lastTurn: last ?? undefined, cost: Number(cost ?? 0), cancelReason: reason ?? undefined };
  }

  async addLog(
    id: string,
    line: string,
    fence: Fence | undefined,
    keep: number,
    request?: { client: string; seq: number },
  ): Promise<LogWriteResult> {
    // Numbered per backend, so a call ioredis re-sends after a lost reply is applied once (addLog.lua).
    const { client, seq } = request ?? { client: this.logClient, seq: ++this.logSeq };
    const reply = await runScript(
      this.client,
      SCRIPTS.addLog,
      { job: this.keys.job(id), logs: this.keys.logs(id) },
      { base: this.keys.base, id, line, token: fence?.token ?? '', attempt: fence?.attempt ?? '', keep, client, seq },
    );
    return toLogWriteResult(reply);
  }
}
