import 'reflect-metadata';
import { Catch, Controller, UseFilters, type ExceptionFilter } from '@nestjs/common';
import { Ctx, EventPattern, KafkaContext, MessagePattern, Payload } from '@nestjs/microservices';
import {
  handlerPatterns,
  methodExceptionFilters,
  patternHandlerKind,
  rpcParametersOf,
} from './nest-internals';

@Catch()
class FilterA implements ExceptionFilter {
  catch() {}
}
@Catch()
class FilterB implements ExceptionFilter {
  catch() {}
}

/** Written only with Nest's public decorators. */
@Controller()
class Probe {
  @EventPattern('event')
  @UseFilters(FilterA)
  @UseFilters(FilterB)
  event(@Ctx() _ctx: KafkaContext, @Payload('orderId') _id: string, @Payload() _all: unknown) {}

  @MessagePattern('message')
  message(_data: unknown) {}

  plain(_data: unknown, _ctx: unknown) {}
}

/**
 * If one of these fails, Nest changed private metadata that `nest-internals.ts` reads: update
 * that file (and only it).
 */
describe("Nest's private metadata, as @IdempotentHandler reads it", () => {
  const proto = Probe.prototype;

  it('finds @Payload() and @Ctx() parameters', () => {
    expect(rpcParametersOf(proto, 'event')).toEqual({
      declared: true,
      payload: expect.arrayContaining([{ index: 1, property: 'orderId' }, { index: 2 }]),
      contextIndex: 0,
    });
    expect(rpcParametersOf(proto, 'event').payload).toHaveLength(2);
  });

  it('defaults to (data, context) without parameter decorators', () => {
    expect(rpcParametersOf(proto, 'plain')).toEqual({
      declared: false,
      payload: [{ index: 0 }],
      contextIndex: 1,
    });
  });

  it('reads the patterns of a handler', () => {
    expect(handlerPatterns(proto.event)).toEqual(['event']);
    expect(handlerPatterns(proto.plain)).toEqual([]);
  });

  it('tells @EventPattern from @MessagePattern handlers', () => {
    expect(patternHandlerKind(proto.event)).toBe('event');
    expect(patternHandlerKind(proto.message)).toBe('message');
    expect(patternHandlerKind(proto.plain)).toBeUndefined();
  });

  it('lists @UseFilters() filters in binding order (the last bound is consulted first)', () => {
    expect(methodExceptionFilters(proto.event)).toEqual([FilterB, FilterA]);
    expect(methodExceptionFilters(proto.plain)).toEqual([]);
  });
});
