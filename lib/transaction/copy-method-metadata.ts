/**
 * Copies every reflect-metadata entry of `from` (a method) onto `to` (its wrapper), so decorators
 * applied before the wrapping one (`@EventPattern`, `@IdempotentHandler`, `SetMetadata`...) still
 * find their metadata on `descriptor.value`.
 */
export function copyMethodMetadata(from: object, to: object): void {
  for (const key of Reflect.getOwnMetadataKeys(from)) {
    Reflect.defineMetadata(key, Reflect.getOwnMetadata(key, from), to);
  }
}
