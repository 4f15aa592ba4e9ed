import { attachment, errorText } from './api.js';
import { attachmentRefsIn, downloadName, type AttachmentRefView } from './attachment-refs.js';
import { h } from './dom.js';
import { sha256Hex } from './digest.js';
import { bytes, short } from './format.js';

/**
 * One attachment as a link. Clicking it fetches the bytes through the API (GET /attachments/{sha256},
 * the caller's tenant only), checks their sha256, and saves them as a download typed
 * application/octet-stream: the page never renders an upload, so an HTML or SVG file cannot run
 * in it, and an image is never inlined.
 */
export function attachmentLink(ref: AttachmentRefView): HTMLElement {
  const status = h('span', { class: 'blob-status', role: 'status' });
  const link = h('a', { href: '#', class: 'attachment' }, ref.name ?? short(ref.sha256));
  link.addEventListener('click', async (event) => {
    event.preventDefault();
    status.textContent = ' fetching…';
    status.className = 'blob-status';
    try {
      const data = await attachment(ref.sha256);
      const actual = await sha256Hex(data);
      if (actual !== ref.sha256) {
        status.textContent = ` sha256 mismatch: the log recorded ${short(ref.sha256)}, the bytes hash to ${short(actual)}. Not saved.`;
        status.className = 'blob-status error';
        return;
      }
      const url = URL.createObjectURL(new Blob([data], { type: 'application/octet-stream' }));
      const save = h('a', { href: url, download: downloadName(ref) });
      save.click();
      setTimeout(() => URL.revokeObjectURL(url), 60_000);
      status.textContent = ` sha256 verified (${bytes(data.byteLength)}), saved.`;
      status.className = 'blob-status ok';
    } catch (error) {
      status.textContent = ` could not fetch it: ${errorText(error)}`;
      status.className = 'blob-status error';
    }
  });
  return h('li', {}, link, h('span', { class: 'muted' }, ` ${ref.mediaType}, ${bytes(ref.bytes)}, sha256 ${short(ref.sha256)}`), status);
}

/** The attachments a run input or message carries, as links; nothing when it carries none. */
export function attachmentList(value: unknown): HTMLElement | undefined {
  const refs = attachmentRefsIn(value);
  if (refs.length === 0) return undefined;
  return h('div', { class: 'attachments' }, h('p', { class: 'muted' }, `Attachments (${refs.length}):`), h('ul', {}, ...refs.map(attachmentLink)));
}
