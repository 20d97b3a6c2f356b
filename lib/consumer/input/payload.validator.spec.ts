import 'reflect-metadata';
import { Transform } from 'class-transformer';
import { IsInt, IsString, Min, registerDecorator, type ValidationArguments } from 'class-validator';
import { IdempotentHandlerOptionsError } from '../consumer.errors';
import { resolveHandlerOptions } from '../idempotent-handler.options';
import { validatePayload } from './payload.validator';

class OrderPlaced {
  @IsString()
  orderId!: string;

  @IsInt()
  @Min(1)
  quantity!: number;
}

/** A DTO whose class-transformer step throws (its @Transform reads a property of undefined). */
class ThrowsInTransform {
  @IsString()
  @Transform(({ value }) => (value as { name: string }).name.toUpperCase())
  customer!: string;
}

/** A DTO whose constructor refuses to run without arguments (class-transformer calls `new Dto()`). */
class ThrowsInConstructor {
  @IsString()
  orderId!: string;

  constructor(required: string) {
    if (required === undefined) throw new TypeError('ThrowsInConstructor needs an argument');
  }
}

/** A DTO whose custom class-validator constraint throws instead of answering. */
function ThrowingConstraint(): PropertyDecorator {
  return (target, property) =>
    registerDecorator({
      name: 'throwingConstraint',
      target: target.constructor,
      propertyName: String(property),
      validator: {
        validate(_value: unknown, _args: ValidationArguments): boolean {
          throw new RangeError('the constraint blew up');
        },
      },
    });
}
class ThrowsInValidation {
  @ThrowingConstraint()
  orderId!: string;
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

  // Issue 18, defect 5: a dto whose transform or validation threw escaped the consume flow.
  it.each([
    ['its class-transformer step (a @Transform) throws', ThrowsInTransform, /TypeError/],
    ['its constructor throws', ThrowsInConstructor, /ThrowsInConstructor needs an argument/],
    ['a class-validator constraint throws', ThrowsInValidation, /the constraint blew up/],
  ])('dto: rejects the payload (not throws) when %s', async (_what, dto, detail) => {
    const result = await validatePayload(payload({ orderId: 'o-1', customer: 7 }), { dto });
    expect(result).toMatchObject({ ok: false, reason: 'invalid-payload' });
    expect((result as { detail: string }).detail).toMatch(new RegExp(`^dto ${dto.name} threw: `));
    expect((result as { detail: string }).detail).toMatch(detail);
  });
});
