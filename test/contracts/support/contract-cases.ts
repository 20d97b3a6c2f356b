import { unmetNeeds } from '../../harness/requirements';
import type { Need } from '../../harness/requirements';

/**
 * Why an implementation cannot show some cases of a contract suite, by case key. A case named
 * here is registered as skipped, with the reason in its name (the skip reporter lists it).
 */
export type ContractSkips<Key extends string> = Partial<Record<Key, string>>;

/**
 * `it` for the cases of one contract suite (`cases`: key -> the behaviour it pins), skipping
 * the ones `skips` names.
 */
export function contractCases<Key extends string>(
  cases: Record<Key, string>,
  skips: ContractSkips<Key>,
): (key: Key, fn: () => Promise<void>) => void {
  return (key, fn) => {
    const reason = skips[key];
    if (reason) it.skip(`${cases[key]} [skipped: ${reason}]`, fn);
    else it(cases[key], fn);
  };
}

/**
 * The reason to skip a case on this run's servers, through the harness's requirements: unset
 * when `needs` are met, else the unmet needs and `why` the case needs them.
 */
export function unlessServers(needs: Need[], why: string): string | undefined {
  const unmet = unmetNeeds(needs);
  return unmet.length === 0 ? undefined : `${unmet.join('; ')}: ${why}`;
}
