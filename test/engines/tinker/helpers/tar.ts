/**
 * Builds gzip'd tar archives laid out as SkyRL tx writes its checkpoint archives: PAX format, a
 * directory entry whose raw name is `/` (mode 0700) first, then the files (mode 0600), each after
 * a PAX header carrying `mtime`. Made with `tar`'s own header encoders.
 */
import { gzipSync } from 'node:zlib';
import { Header, Pax } from 'tar';

/** A member of the archive: a file with bytes, or a directory. */
export interface TarMember {
  readonly path: string;
  readonly data?: Uint8Array;
  readonly type?: 'File' | 'Directory' | 'SymbolicLink';
  readonly linkpath?: string;
}

export function skyrlArchive(members: readonly TarMember[], options: { rootEntry?: boolean } = {}): Uint8Array {
  const blocks: Buffer[] = [];
  const mtime = new Date(1_796_000_000_000);
  const add = (m: TarMember) => {
    const type = m.type ?? (m.data ? 'File' : 'Directory');
    const size = m.data?.length ?? 0;
    blocks.push(new Pax({ path: m.path, mtime }).encode());
    const header = Buffer.alloc(512);
    new Header({ path: m.path, type, mode: type === 'Directory' ? 0o700 : 0o600, size, mtime, uid: 0, gid: 0, linkpath: m.linkpath }).encode(header, 0);
    blocks.push(header);
    if (m.data) {
      blocks.push(Buffer.from(m.data));
      blocks.push(Buffer.alloc((512 - (size % 512)) % 512));
    }
  };
  if (options.rootEntry !== false) add({ path: '/', type: 'Directory' });
  for (const m of members) add(m);
  blocks.push(Buffer.alloc(1024));
  return new Uint8Array(gzipSync(Buffer.concat(blocks)));
}
