// What the e2e suite asks of the browser (suite/browser.ts asks through askRunner, launcher.ts answers).

export type BrowserRequest =
  /**
   * Clicks the first element the Playwright selector matches, once it is visible; `atOnce`: in the frame it becomes
   * visible, as a user does who clicks where it is about to appear (no wait for it to be stable).
   */
  | {
      readonly action: 'click';
      readonly selector: string;
      readonly button?: 'left' | 'right';
      readonly atOnce?: boolean;
    }
  /** Every element the selector matches (after waiting up to 10 s for a first one, with `wait`). */
  | { readonly action: 'elements'; readonly selector: string; readonly wait?: boolean }
  | { readonly action: 'press'; readonly key: string };

/** What `elements` answers of each element. */
export interface ElementSeen {
  readonly text: string;
  readonly ariaLabel: string | null;
  readonly ariaExpanded: string | null;
  /** The computed `background-image` of its `::before`, where icon themes put file icons. */
  readonly beforeImage: string;
}
