// Generated text for the knowledge benchmarks, the same for a given seed: a vocabulary of pronounceable
// pseudo-words drawn with Zipf-like frequencies (none is an English stop word, so the full-text search indexes
// every one), paragraphs of bounded length, and documents in each format the local parsers read.
import { Document, HeadingLevel, Packer, Paragraph } from 'docx';
import PDFDocument from 'pdfkit';
import { seededRandom } from './random.mjs';

const ONSETS = ['b', 'd', 'f', 'g', 'k', 'l', 'm', 'n', 'p', 'r', 's', 't', 'v', 'z', 'br', 'dr', 'gl', 'kr', 'pl', 'st', 'tr', 'sk'];
const VOWELS = ['a', 'e', 'i', 'o', 'u', 'ai', 'ou'];
const CODAS = ['', '', 'n', 'r', 'l', 's', 'k', 'm'];

/**
 * A text generator: `word()` (Zipf over `vocabulary` words, exponent 1), `paragraph(min, max)` (sentences of 6
 * to 18 words, between `min` and `max` characters), `title()`; `random()` is its PRNG.
 */
export function textGenerator(seed, vocabulary = 5000) {
  const random = seededRandom(seed);
  const pick = (list) => list[Math.floor(random() * list.length)];
  const words = new Set();
  while (words.size < vocabulary) {
    const syllables = 2 + Math.floor(random() * 3);
    let w = '';
    for (let i = 0; i < syllables; i++) w += pick(ONSETS) + pick(VOWELS) + (i === syllables - 1 ? pick(CODAS) : '');
    words.add(w);
  }
  const list = [...words];
  const cumulative = new Float64Array(list.length);
  let sum = 0;
  for (let rank = 0; rank < list.length; rank++) cumulative[rank] = sum += 1 / (rank + 1);
  const word = () => {
    const x = random() * sum;
    let lo = 0;
    let hi = cumulative.length - 1;
    while (lo < hi) {
      const mid = (lo + hi) >> 1;
      if (cumulative[mid] < x) lo = mid + 1;
      else hi = mid;
    }
    return list[lo];
  };
  const capital = (w) => w[0].toUpperCase() + w.slice(1);
  const paragraph = (min, max) => {
    const target = min + Math.floor(random() * (max - min + 1));
    let text = '';
    let inSentence = 0;
    let sentenceLength = 0;
    for (;;) {
      const w = word();
      if (text.length + w.length + 2 > target) break;
      if (inSentence === 0) {
        sentenceLength = 6 + Math.floor(random() * 13);
        text += (text ? ' ' : '') + capital(w);
      } else text += ` ${w}`;
      if (++inSentence === sentenceLength) ((text += '.'), (inSentence = 0));
    }
    return inSentence ? `${text}.` : text;
  };
  const title = () => Array.from({ length: 2 + Math.floor(random() * 3) }, () => capital(word())).join(' ');
  return { random, word, paragraph, title };
}

/** Paragraphs of 200 to 900 characters adding up to about `chars`. */
function paragraphsOf(text, chars) {
  const out = [];
  for (let n = 0; n < chars;) {
    const p = text.paragraph(200, 900);
    out.push(p);
    n += p.length + 2;
  }
  return out;
}

const escapeHtml = (s) => s.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;');
const encode = (s) => new TextEncoder().encode(s);

/** Sections of a titled document: `{heading, paragraphs}`, three to eight paragraphs each. */
function sectionsOf(text, chars) {
  const paragraphs = paragraphsOf(text, chars);
  const sections = [];
  while (paragraphs.length) sections.push({ heading: text.title(), paragraphs: paragraphs.splice(0, 3 + Math.floor(text.random() * 6)) });
  return sections;
}

async function pdfBytes(title, sections) {
  const doc = new PDFDocument();
  const parts = [];
  doc.on('data', (part) => parts.push(part));
  const ended = new Promise((resolve) => doc.on('end', resolve));
  doc.fontSize(20).text(title);
  for (const { heading, paragraphs } of sections) {
    doc.moveDown().fontSize(14).text(heading);
    for (const p of paragraphs) doc.moveDown(0.5).fontSize(11).text(p);
  }
  doc.end();
  await ended;
  return new Uint8Array(Buffer.concat(parts));
}

async function docxBytes(title, sections) {
  const children = [new Paragraph({ text: title, heading: HeadingLevel.HEADING_1 })];
  for (const { heading, paragraphs } of sections) {
    children.push(new Paragraph({ text: heading, heading: HeadingLevel.HEADING_2 }));
    for (const p of paragraphs) children.push(new Paragraph(p));
  }
  return new Uint8Array(await Packer.toBuffer(new Document({ sections: [{ children }] })));
}

/** The formats the local parsers read: extension, content type, and a writer of about `chars` characters of text. */
export const FORMATS = {
  txt: { contentType: 'text/plain', write: async (text, chars) => encode([text.title(), ...paragraphsOf(text, chars)].join('\n\n')) },
  md: {
    contentType: 'text/markdown',
    write: async (text, chars) => {
      const lines = [`# ${text.title()}`];
      for (const { heading, paragraphs } of sectionsOf(text, chars)) {
        lines.push(
          `## ${heading}`,
          ...paragraphs.slice(0, -1),
          paragraphs
            .at(-1)
            .split('. ')
            .map((s) => `- ${s}`)
            .join('\n'),
        );
      }
      return encode(lines.join('\n\n'));
    },
  },
  html: {
    contentType: 'text/html',
    write: async (text, chars) => {
      const title = escapeHtml(text.title());
      const body = sectionsOf(text, chars).map(
        ({ heading, paragraphs }) => `<h2>${escapeHtml(heading)}</h2>\n${paragraphs.map((p) => `<p>${escapeHtml(p)}</p>`).join('\n')}`,
      );
      return encode(
        `<!doctype html>\n<html><head><meta charset="utf-8"><title>${title}</title></head>\n<body><h1>${title}</h1>\n${body.join('\n')}\n</body></html>\n`,
      );
    },
  },
  csv: {
    contentType: 'text/csv',
    write: async (text, chars) => {
      const rows = ['id,item,category,description,quantity,unit_price'];
      for (let id = 1, n = 0; n < chars; id++) {
        const row = `${id},${text.word()} ${text.word()},${text.word()},"${text.paragraph(60, 240)}",${1 + Math.floor(text.random() * 500)},${(text.random() * 1000).toFixed(2)}`;
        rows.push(row);
        n += row.length + 1;
      }
      return encode(`${rows.join('\n')}\n`);
    },
  },
  pdf: { contentType: 'application/pdf', write: (text, chars) => pdfBytes(text.title(), sectionsOf(text, chars)) },
  docx: {
    contentType: 'application/vnd.openxmlformats-officedocument.wordprocessingml.document',
    write: (text, chars) => docxBytes(text.title(), sectionsOf(text, chars)),
  },
};
