// A list paged by cursor (the audit log: `limit` and `before` in, `{entries, next_before}`
// out), as Stripe's lists are: `await` it for one page, or `for await` over every item of
// every page from there, each next page asked for `before` the last one's `next_before`.
import { ApiCall, type WithResponse } from './api-call.js';

export interface CursorPage {
  /** The `before` of the next (older) page; null on the last one. */
  next_before: string | null;
}

export class PagedCall<Page extends CursorPage, Item>
  extends ApiCall<Page>
  implements AsyncIterable<Item>
{
  constructor(
    first: () => Promise<WithResponse<Page>>,
    private readonly pageBefore: (before: string) => ApiCall<Page>,
    private readonly itemsOf: (page: Page) => readonly Item[],
  ) {
    super(first);
  }

  /** Every item from the first page on; the first page is fetched once, awaited or not. */
  async *[Symbol.asyncIterator](): AsyncIterator<Item> {
    let page = (await this.withResponse()).data;
    for (;;) {
      yield* this.itemsOf(page);
      if (page.next_before === null) {
        return;
      }
      page = await this.pageBefore(page.next_before);
    }
  }
}
