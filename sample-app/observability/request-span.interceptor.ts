import { Injectable } from '@nestjs/common';
import type { CallHandler, ExecutionContext, NestInterceptor } from '@nestjs/common';
import { context, SpanKind, SpanStatusCode, trace } from '@opentelemetry/api';
import { Observable } from 'rxjs';

/**
 * One server span per HTTP request, active while the handler runs, so the events it emits carry
 * its trace context (what @opentelemetry/instrumentation-http does in a real deployment).
 */
@Injectable()
export class RequestSpanInterceptor implements NestInterceptor {
  private readonly tracer = trace.getTracer('sample-app');

  intercept(execution: ExecutionContext, next: CallHandler): Observable<unknown> {
    if (execution.getType() !== 'http') return next.handle();
    const request = execution
      .switchToHttp()
      .getRequest<{ method: string; route?: { path: string } }>();
    const span = this.tracer.startSpan(`${request.method} ${request.route?.path ?? ''}`, {
      kind: SpanKind.SERVER,
    });
    const active = trace.setSpan(context.active(), span);
    return new Observable((subscriber) =>
      context.with(active, () =>
        next.handle().subscribe({
          next: (value) => subscriber.next(value),
          error: (error: unknown) => {
            span.setStatus({ code: SpanStatusCode.ERROR, message: String(error) });
            span.end();
            subscriber.error(error);
          },
          complete: () => {
            span.end();
            subscriber.complete();
          },
        }),
      ),
    );
  }
}
