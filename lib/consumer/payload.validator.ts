/** A class-validator DTO class, or a function that accepts or rejects the decoded payload. */
export type PayloadValidateOption =
  | (new (...args: any[]) => object)
  | ((payload: unknown) => boolean | string | void | Promise<boolean | string | void>);

export type ValidationResult =
  { ok: true; payload: unknown } | { ok: false; reason: 'invalid-payload'; detail: string };

/** The subset of class-validator / class-transformer we call (loaded lazily: optional peers). */
export interface ClassValidation {
  plainToInstance(cls: new (...args: any[]) => object, plain: object): object;
  validate(instance: object): Promise<ValidationErrorLike[]>;
}
export interface ValidationErrorLike {
  property: string;
  constraints?: Record<string, string>;
  children?: ValidationErrorLike[];
}

/** True for `class X {}` (a DTO), false for a plain or arrow function. */
export function isClass(value: unknown): value is new (...args: any[]) => object {
  return typeof value === 'function' && /^class[\s{]/.test(Function.prototype.toString.call(value));
}

/**
 * Runs the `validate` hook. A function accepts with `true`/`undefined` and rejects with `false`,
 * a message string, or by throwing. A DTO class is instantiated with class-transformer and checked
 * with class-validator; the handler then receives the DTO instance.
 */
export async function validatePayload(
  payload: unknown,
  validate: PayloadValidateOption | undefined,
  loadClassValidation: () => ClassValidation = requireClassValidation,
): Promise<ValidationResult> {
  if (!validate) return { ok: true, payload };
  if (isClass(validate)) {
    if (typeof payload !== 'object' || payload === null || Array.isArray(payload)) {
      return { ok: false, reason: 'invalid-payload', detail: `payload is not an object` };
    }
    const lib = loadClassValidation();
    const instance = lib.plainToInstance(validate, payload);
    const errors = await lib.validate(instance);
    if (errors.length > 0) {
      return {
        ok: false,
        reason: 'invalid-payload',
        detail: `payload fails ${validate.name}: ${flattenErrors(errors).join('; ')}`,
      };
    }
    return { ok: true, payload: instance };
  }
  let verdict: boolean | string | void;
  try {
    verdict = (await (validate as (payload: unknown) => unknown)(payload)) as
      boolean | string | void;
  } catch (error) {
    return {
      ok: false,
      reason: 'invalid-payload',
      detail: `validate threw: ${(error as Error)?.message ?? String(error)}`,
    };
  }
  if (verdict === false)
    return { ok: false, reason: 'invalid-payload', detail: 'rejected by validate' };
  if (typeof verdict === 'string') return { ok: false, reason: 'invalid-payload', detail: verdict };
  return { ok: true, payload };
}

export function flattenErrors(errors: ValidationErrorLike[], prefix = ''): string[] {
  const lines: string[] = [];
  for (const error of errors) {
    const path = prefix ? `${prefix}.${error.property}` : error.property;
    for (const message of Object.values(error.constraints ?? {})) lines.push(`${path}: ${message}`);
    if (error.children?.length) lines.push(...flattenErrors(error.children, path));
  }
  return lines;
}

export function requireClassValidation(): ClassValidation {
  try {
    const transformer = require('class-transformer') as {
      plainToInstance: ClassValidation['plainToInstance'];
    };
    const validator = require('class-validator') as { validate: ClassValidation['validate'] };
    return { plainToInstance: transformer.plainToInstance, validate: validator.validate };
  } catch {
    throw new Error(
      '@IdempotentHandler({ validate: SomeDto }) needs the class-validator and class-transformer' +
        ' packages: npm install class-validator class-transformer',
    );
  }
}
