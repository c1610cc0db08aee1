import { describe, expect, it } from 'vitest';
import { tempDir } from '../../helpers/tmp.js';
import { captureLogger } from '../../helpers/capture-logger.js';
import { fixAt, openOutbox } from './helpers.js';

/**
 * The final commit at stop fails (a read-only card): the fixes held in memory are
 * lost, and the log says how many even when the repeated commit failure was already throttled.
 */
describe('outbox stop with a failing final commit', () => {
  it('logs at error how many held fixes are lost, after the throttled commit failures said nothing more', async () => {
    const dir = tempDir();
    const log = captureLogger();
    const { db, outbox } = await openOutbox(dir, { logger: log.logger });
    db.pragma('query_only = ON');
    for (let i = 0; i < 5; i++) outbox.record(fixAt(i));
    outbox.flush();
    for (let i = 5; i < 12; i++) outbox.record(fixAt(i));
    outbox.flush();
    await outbox.stop();
    db.close();
    const lines = log
      .text()
      .split('\n')
      .filter((l) => l.includes('they are lost'));
    expect(lines).toHaveLength(1);
    expect(lines[0]).toMatch(/"dropped":12/);
    expect(lines[0]).toMatch(/"level":"?(50|error)/);
  });

  it('says nothing of losses when the final commit succeeds', async () => {
    const log = captureLogger();
    const { db, outbox } = await openOutbox(tempDir(), { logger: log.logger });
    for (let i = 0; i < 5; i++) outbox.record(fixAt(i));
    await outbox.stop();
    db.close();
    expect(log.text()).not.toMatch(/they are lost/);
  });
});
