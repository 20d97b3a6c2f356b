/** Why a term ended by itself; the node decides what comes next. */
export type TermEnd = 'fenced-off' | 'failed';
