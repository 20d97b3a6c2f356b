import { DEAD_LETTERS_USAGE } from './dead-letters.args';
import { SCHEDULED_USAGE } from './scheduled.args';

/** The CLI's help: every command. */
export const USAGE = `${DEAD_LETTERS_USAGE}\n${SCHEDULED_USAGE}`;
