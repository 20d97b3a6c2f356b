import type { ConsumedMessage } from './consumed-message';
import { extractEventId } from './event-id.extractor';

const message = (
  headers: Record<string, string>,
  decodedHeaders: string[] = [],
): ConsumedMessage => ({
  topic: 't',
  partition: 0,
  offset: '7',
  key: 'k',
  headers,
  decodedHeaders,
  value: '{}',
  rawValue: false,
});

describe('event id extraction', () => {
  // Defect 4: every such id used to become "[object Object]" (or an array's first element).
  it("refuses an id header Nest's parser JSON-decoded, naming the fix", () => {
    const result = extractEventId(message({}, ['ce_id']), 'ce_id', () => 'fallback', {});
    expect(result).toMatchObject({ ok: false, reason: 'invalid-event-id' });
    expect((result as { detail: string }).detail).toMatch(/OutboxKafkaServer/);
  });

  it('reads the configured header (the relay writes ce_id)', () => {
    expect(extractEventId(message({ ce_id: 'e-1' }), 'ce_id', undefined, {})).toEqual({
      ok: true,
      eventId: 'e-1',
      source: 'header',
    });
    expect(extractEventId(message({ 'x-id': 'e-2' }), 'x-id', undefined, {})).toMatchObject({
      eventId: 'e-2',
    });
  });

  it('prefers the header over the fallback', () => {
    const fallback = jest.fn(() => 'from-fallback');
    expect(extractEventId(message({ ce_id: 'e-1' }), 'ce_id', fallback, {})).toMatchObject({
      eventId: 'e-1',
    });
    expect(fallback).not.toHaveBeenCalled();
  });

  it('calls the fallback with the message and decoded payload when the header is missing', () => {
    const fallback = jest.fn((_m: ConsumedMessage, p: unknown) => (p as { id: string }).id);
    const msg = message({});
    expect(extractEventId(msg, 'ce_id', fallback, { id: 'p-9' })).toEqual({
      ok: true,
      eventId: 'p-9',
      source: 'fallback',
    });
    expect(fallback).toHaveBeenCalledWith(msg, { id: 'p-9' });
  });

  it('reports a missing id: no header and no fallback, a fallback returning nothing or throwing', () => {
    expect(extractEventId(message({}), 'ce_id', undefined, {})).toMatchObject({
      ok: false,
      reason: 'missing-event-id',
    });
    expect(extractEventId(message({}), 'ce_id', () => undefined, {})).toMatchObject({
      ok: false,
      reason: 'missing-event-id',
    });
    const throwing = () => {
      throw new Error('boom');
    };
    expect(extractEventId(message({}), 'ce_id', throwing, undefined)).toMatchObject({
      ok: false,
      reason: 'missing-event-id',
      detail: expect.stringContaining('boom'),
    });
  });

  it.each([
    ['empty', ''],
    ['too long', 'x'.repeat(257)],
    ['control characters', 'a\u0000b'],
  ])('rejects an unusable id (%s)', (_name, id) => {
    expect(extractEventId(message({ ce_id: id }), 'ce_id', undefined, {})).toMatchObject({
      ok: false,
      reason: 'invalid-event-id',
    });
  });

  it('rejects a fallback that returns a non-string', () => {
    const fallback = (() => 42) as unknown as () => string;
    expect(extractEventId(message({}), 'ce_id', fallback, {})).toMatchObject({
      ok: false,
      reason: 'invalid-event-id',
    });
  });
});
