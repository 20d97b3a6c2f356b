import 'reflect-metadata';
import { IsInt, IsString, Min } from 'class-validator';
import { IdempotentHandlerOptionsError } from './errors/idempotent-handler-options.error';
import { resolveHandlerOptions } from './idempotent-handler.options';
import { validatePayload } from './payload.validator';

class OrderPlaced {
  @IsString()
  orderId!: string;

  @IsInt()
  @Min(1)
  quantity!: number;
}

const payload = (value: Record<string, unknown>) => Object.assign(Object.create(null), value);

describe('payload checks (dto, validate)', () => {
  it('passes everything when there is no check', async () => {
    await expect(validatePayload({ a: 1 }, {})).resolves.toEqual({ ok: true, payload: { a: 1 } });
  });

  it('validate: accepts with true or undefined, rejects with false, a message, or a throw', async () => {
    const check = (validate: (p: Record<string, unknown>) => unknown) =>
      validatePayload({ a: 1 }, { validate: validate as never });
    await expect(check(() => true)).resolves.toMatchObject({ ok: true });
    await expect(check(() => undefined)).resolves.toMatchObject({ ok: true });
    await expect(check(async () => true)).resolves.toMatchObject({ ok: true });
    await expect(check(() => false)).resolves.toEqual({
      ok: false,
      reason: 'invalid-payload',
      detail: 'rejected by validate',
    });
    await expect(check(() => 'needs an orderId')).resolves.toMatchObject({
      detail: 'needs an orderId',
    });
    await expect(
      check(() => {
        throw new Error('bad shape');
      }),
    ).resolves.toMatchObject({ ok: false, detail: 'validate threw: bad shape' });
  });

  it('dto: builds the instance from a null-prototype payload, checks it, hands it over', async () => {
    const good = await validatePayload(payload({ orderId: 'o-1', quantity: 2 }), {
      dto: OrderPlaced,
    });
    expect(good.ok).toBe(true);
    expect((good as { payload: unknown }).payload).toBeInstanceOf(OrderPlaced);
    expect({ ...(good as { payload: object }).payload }).toEqual({ orderId: 'o-1', quantity: 2 });

    const bad = await validatePayload(payload({ orderId: 7, quantity: 0 }), { dto: OrderPlaced });
    expect(bad).toMatchObject({ ok: false, reason: 'invalid-payload' });
    expect((bad as { detail: string }).detail).toMatch(/OrderPlaced: orderId: .*; quantity: /);
  });

  // Defect 7: DTO checks ran without whitelist.
  it('dto: strips properties without decorators by default; forbidNonWhitelisted refuses them', async () => {
    const extra = payload({ orderId: 'o-1', quantity: 2, isAdmin: true });
    const stripped = await validatePayload(extra, { dto: OrderPlaced });
    expect(stripped.ok).toBe(true);
    expect((stripped as { payload: object }).payload).not.toHaveProperty('isAdmin');
    const strict = await validatePayload(extra, {
      dto: OrderPlaced,
      validatorOptions: { forbidNonWhitelisted: true },
    });
    expect(strict).toMatchObject({ ok: false, reason: 'invalid-payload' });
    expect((strict as { detail: string }).detail).toMatch(/isAdmin/);
  });

  // Defect 7: a class used to be recognized by a regex on its source text.
  it('a DTO class passed as validate is refused when the class is defined', () => {
    expect(() => resolveHandlerOptions('C', 'm', { validate: OrderPlaced as never })).toThrow(
      IdempotentHandlerOptionsError,
    );
    expect(() => resolveHandlerOptions('C', 'm', { validate: OrderPlaced as never })).toThrow(
      /Pass it as dto: OrderPlaced/,
    );
    expect(() => resolveHandlerOptions('C', 'm', { dto: (() => 1) as never })).toThrow(
      /expected a class/,
    );
    expect(() => resolveHandlerOptions('C', 'm', { validatorOptions: {} })).toThrow(/without dto/);
    expect(resolveHandlerOptions('C', 'm', { dto: OrderPlaced }).dto).toBe(OrderPlaced);
  });
});
