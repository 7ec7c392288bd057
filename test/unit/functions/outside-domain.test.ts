// The Functions Framework runs each request in a node:domain; Furnish's functions leave it as
// they start (shared/functions/outside-domain.ts), and lose no error by doing so.
import { describe, expect, it, jest } from '@jest/globals';
import * as functions from '@google-cloud/functions-framework';
import { getTestServer } from '@google-cloud/functions-framework/testing';
import request from 'supertest';
import { outsideDomain } from '../../../shared/functions/outside-domain.ts';

const activeDomain = () => Boolean((process as { domain?: unknown }).domain);

/** Whether a domain was active when the handler started, and after two awaits (a timer and a promise). */
async function domainsSeen(name: string): Promise<{ atStart: boolean; afterAwait: boolean }> {
  const res = await request(getTestServer(name)).post('/').send({});
  expect(res.status).toBe(200);
  return res.body as { atStart: boolean; afterAwait: boolean };
}

const probe: functions.HttpFunction = async (_req, res) => {
  const atStart = activeDomain();
  await new Promise((r) => setTimeout(r, 1));
  await Promise.resolve();
  res.json({ atStart, afterAwait: activeDomain() });
};

/**
 * What the framework logs with console.error while `f` runs (a crashed function's stack): asserted
 * on by the caller, not printed into a passing run.
 */
async function errorsLogged(f: () => Promise<void>): Promise<string[]> {
  const spy = jest.spyOn(console, 'error').mockImplementation(() => undefined);
  try {
    await f();
    return spy.mock.calls.map((args) => args.map(String).join(' '));
  } finally {
    spy.mockRestore();
  }
}

describe('functions outside the framework\'s domain', () => {
  it('the framework runs a plain handler inside a domain (what the wrapper is for)', async () => {
    functions.http('domain-plain', probe);
    expect(await domainsSeen('domain-plain')).toEqual({ atStart: true, afterAwait: true });
  });

  it('a wrapped handler runs outside it, and so does everything it awaits', async () => {
    functions.http('domain-left', outsideDomain(probe));
    expect(await domainsSeen('domain-left')).toEqual({ atStart: false, afterAwait: false });
    // The next request starts in a fresh domain and leaves it too.
    expect(await domainsSeen('domain-left')).toEqual({ atStart: false, afterAwait: false });
  });

  it('a wrapped handler that rejects still gets the framework\'s crash response', async () => {
    functions.http('domain-reject', outsideDomain(async () => {
      await Promise.resolve();
      throw new Error('boom after leaving the domain');
    }));
    const logged = await errorsLogged(async () => {
      const res = await request(getTestServer('domain-reject')).post('/').send({});
      expect(res.status).toBe(500);
    });
    // Not lost: the framework logged it, with its stack.
    expect(logged).toEqual([expect.stringMatching(/^Error: boom after leaving the domain\n\s+at /)]);
  });

  it('a wrapped CloudEvent function runs outside it and its failure still nacks (500)', async () => {
    let seen: boolean | undefined;
    functions.cloudEvent('domain-event', outsideDomain(async (event: functions.CloudEvent<unknown>) => {
      await Promise.resolve();
      seen = activeDomain();
      if (event.type === 'fail') throw new Error('nack');
    }));
    const send = (type: string) => request(getTestServer('domain-event')).post('/').set({ 'ce-specversion': '1.0', 'ce-id': '1', 'ce-source': 's', 'ce-type': type, 'content-type': 'application/json' }).send({});
    expect((await send('ok')).status).toBe(204);
    expect(seen).toBe(false);
    const logged = await errorsLogged(async () => {
      expect((await send('fail')).status).toBe(500);
    });
    expect(logged).toEqual([expect.stringMatching(/^Error: nack\n/)]);
  });
});
