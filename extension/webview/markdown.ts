/** Markdown for the model's output: markdown-it with raw HTML off, so nothing the model writes runs. */

import MarkdownIt from 'markdown-it';

const md = new MarkdownIt({ html: false, linkify: true, breaks: false, typographer: false });

const cache = new Map<string, string>();
const CACHE_LIMIT = 400;

export function renderMarkdown(text: string): string {
  const hit = cache.get(text);
  if (hit !== undefined) {
    return hit;
  }
  const html = md.render(closeOpenFence(text));
  if (cache.size >= CACHE_LIMIT) {
    cache.clear();
  }
  cache.set(text, html);
  return html;
}

/** One line of markdown (no paragraph), e.g. a policy reason with `code` in it. */
export function renderInlineMarkdown(text: string): string {
  return md.renderInline(text);
}

/** While a code block streams in, close it so the rest does not render as prose. */
export function closeOpenFence(text: string): string {
  const fences = text.match(/^\s*(```|~~~)/gm)?.length ?? 0;
  return fences % 2 === 1 ? `${text}\n\`\`\`` : text;
}
