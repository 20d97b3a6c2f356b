import { describeError } from '../../common/errors/describe-error';
import { refuse, type InputRefusal } from './input.refusal';

/** A function that accepts or rejects the decoded payload (`validate` option). */
export type PayloadValidateOption = (
  payload: Record<string, unknown>,
) => boolean | string | void | Promise<boolean | string | void>;

/** A class-validator DTO class (`dto` option). */
export type PayloadDtoClass = new (...args: any[]) => object;

/** class-validator options for `dto` checks (a subset of its `ValidatorOptions`). */
export interface DtoValidatorOptions {
  whitelist?: boolean;
  forbidNonWhitelisted?: boolean;
  forbidUnknownValues?: boolean;
  skipMissingProperties?: boolean;
  groups?: string[];
  [option: string]: unknown;
}

/**
 * What `dto` checks run with unless `validatorOptions` says otherwise: properties without
 * decorators are stripped (`whitelist`, so a producer adding a field does not dead-letter every
 * event) and unknown objects are refused (`forbidUnknownValues`). `forbidNonWhitelisted: true`
 * refuses extra properties instead of stripping them.
 */
const DEFAULT_DTO_VALIDATOR_OPTIONS: Readonly<DtoValidatorOptions> = Object.freeze({
  whitelist: true,
  forbidUnknownValues: true,
});

export interface PayloadChecks {
  validate?: PayloadValidateOption;
  dto?: PayloadDtoClass;
  validatorOptions?: DtoValidatorOptions;
}

export type ValidationResult = { ok: true; payload: unknown } | InputRefusal<'invalid-payload'>;

/** The subset of class-validator / class-transformer we call (loaded lazily: optional peers). */
export interface ClassValidation {
  plainToInstance(cls: PayloadDtoClass, plain: object): object;
  validate(instance: object, options: DtoValidatorOptions): Promise<ValidationErrorLike[]>;
  /** Whether class-validator holds constraints for `target` (it is a DTO class). */
  hasConstraints(target: unknown): boolean;
}
export interface ValidationErrorLike {
  property: string;
  constraints?: Record<string, string>;
  children?: ValidationErrorLike[];
}

/**
 * Runs the payload checks: `dto` (class-transformer builds the instance, class-validator checks
 * it; the handler then receives the instance), then `validate` (accepts with `true`/`undefined`,
 * rejects with `false`, a message string, or by throwing). A `dto` step that throws (a
 * `@Transform` reading a missing property, a constructor that needs arguments, a custom
 * constraint that throws) rejects the payload like a failed check: the same payload would throw
 * again on every delivery.
 */
export async function validatePayload(
  payload: Record<string, unknown>,
  { dto, validatorOptions, validate }: PayloadChecks,
  loadClassValidation: () => ClassValidation = requireClassValidation,
): Promise<ValidationResult> {
  let result: unknown = payload;
  if (dto) {
    const lib = loadClassValidation();
    let errors: ValidationErrorLike[];
    try {
      result = lib.plainToInstance(dto, payload);
      errors = await lib.validate(result as object, {
        ...DEFAULT_DTO_VALIDATOR_OPTIONS,
        ...validatorOptions,
      });
    } catch (error) {
      return refuse('invalid-payload', `dto ${dto.name} threw: ${describeError(error)}`);
    }
    if (errors.length > 0) {
      return refuse(
        'invalid-payload',
        `payload fails ${dto.name}: ${flattenErrors(errors).join('; ')}`,
      );
    }
  }
  if (validate) {
    let verdict: boolean | string | void;
    try {
      verdict = await validate(payload);
    } catch (error) {
      return refuse(
        'invalid-payload',
        `validate threw: ${(error as Error)?.message ?? String(error)}`,
      );
    }
    if (verdict === false) return refuse('invalid-payload', 'rejected by validate');
    if (typeof verdict === 'string') return refuse('invalid-payload', verdict);
  }
  return { ok: true, payload: result };
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
  let transformer: { plainToInstance: ClassValidation['plainToInstance'] };
  let validator: {
    validate: ClassValidation['validate'];
    getMetadataStorage(): {
      getTargetValidationMetadatas(
        target: unknown,
        schema: string,
        always: boolean,
        strict: boolean,
      ): unknown[];
    };
  };
  try {
    transformer = require('class-transformer');
    validator = require('class-validator');
  } catch {
    throw new Error(
      '@IdempotentHandler({ dto: SomeDto }) needs the class-validator and class-transformer' +
        ' packages: npm install class-validator class-transformer',
    );
  }
  return {
    plainToInstance: (cls, plain) => transformer.plainToInstance(cls, plain),
    validate: (instance, options) => validator.validate(instance, options),
    hasConstraints: (target) =>
      typeof target === 'function' &&
      validator.getMetadataStorage().getTargetValidationMetadatas(target, '', true, false).length >
        0,
  };
}

/** class-validator, when installed; undefined otherwise (it is an optional peer). */
export function optionalClassValidation(): ClassValidation | undefined {
  try {
    return requireClassValidation();
  } catch {
    return undefined;
  }
}
