import { runFenced, throwIfFenced } from './work-fence';

describe('work fence', () => {
  it('throws the abort reason inside aborted fenced work, and nowhere else', async () => {
    const controller = new AbortController();
    const reason = new Error('timed out');
    let late: Promise<void> | undefined;
    runFenced(controller.signal, () => {
      throwIfFenced(); // not aborted yet
      late = new Promise<void>((resolve) => setTimeout(resolve, 10)).then(() => throwIfFenced());
    });
    controller.abort(reason);
    await expect(late).rejects.toBe(reason);
    expect(() => throwIfFenced()).not.toThrow();
  });
});
