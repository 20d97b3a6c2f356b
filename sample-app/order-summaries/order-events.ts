import { IsNumber, IsOptional, IsString } from 'class-validator';

/** Payload of `OrderCreated`, as the orders service emits it. */
export class OrderCreatedEvent {
  @IsString()
  orderId!: string;

  @IsString()
  customerId!: string;

  @IsNumber()
  total!: number;

  @IsNumber()
  itemCount!: number;
}

/** Payload of `OrderCancelled`. */
export class OrderCancelledEvent {
  @IsString()
  orderId!: string;

  @IsOptional()
  @IsString()
  reason?: string;
}
