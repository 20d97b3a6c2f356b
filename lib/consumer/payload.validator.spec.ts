import 'reflect-metadata';
import { IsInt, IsString, Min } from 'class-validator';
import { isClass, validatePayload } from './payload.validator';

class OrderPlaced {
  @IsString()
  orderId!: string;

  @IsInt()
  @Min(1)
  quantity!: number;
}

describe('validate hook', () => {
  it('passes everything when there is no hook', async () => {
    await expect(validatePayload({ a: 1 }, undefined)).resolves.toEqual({
      ok: true,
      payload: { a: 1 },
    });
  });

  it('accepts with true or undefined from a function, rejects with false, a message, or a throw', async () => {
    await expect(validatePayload(1, () => true)).resolves.toMatchObject({ ok: true });
    await expect(validatePayload(1, () => undefined)).resolves.toMatchObject({ ok: true });
    await expect(validatePayload(1, async () => true)).resolves.toMatchObject({ ok: true });
    await expect(validatePayload(1, () => false)).resolves.toEqual({
      ok: false,
      reason: 'invalid-payload',
      detail: 'rejected by validate',
    });
    await expect(validatePayload(1, () => 'needs an orderId')).resolves.toMatchObject({
      ok: false,
      detail: 'needs an orderId',
    });
    await expect(
      validatePayload(1, () => {
        throw new Error('bad shape');
      }),
    ).resolves.toMatchObject({ ok: false, detail: 'validate threw: bad shape' });
  });

  it('validates a class-validator DTO and hands over the DTO instance', async () => {
    const good = await validatePayload({ orderId: 'o-1', quantity: 2 }, OrderPlaced);
    expect(good.ok).toBe(true);
    expect((good as { payload: unknown }).payload).toBeInstanceOf(OrderPlaced);
    expect((good as { payload: unknown }).payload).toEqual({ orderId: 'o-1', quantity: 2 });

    const bad = await validatePayload({ orderId: 7, quantity: 0 }, OrderPlaced);
    expect(bad).toMatchObject({ ok: false, reason: 'invalid-payload' });
    expect((bad as { detail: string }).detail).toMatch(/OrderPlaced: orderId: .*; quantity: /);

    await expect(validatePayload([1], OrderPlaced)).resolves.toMatchObject({
      ok: false,
      detail: 'payload is not an object',
    });
  });

  it('tells classes from functions', () => {
    expect(isClass(OrderPlaced)).toBe(true);
    expect(isClass(() => true)).toBe(false);
    expect(isClass(function named() {})).toBe(false);
  });
});
