#!/usr/bin/env ruby
# frozen_string_literal: true
#
# Checks src/inflate.c against Ruby's zlib, as Net::HTTP uses it.
#
#   ruby tools/verify-inflate.rb [--seed N] [--scale N] [--write-fixtures]
#                                [--keep DIR] [--bench] [--cc CC]
#
# Generates many inputs with Ruby's Zlib (GzipWriter and Deflate at every
# level and strategy, zlib window bits 8..15, memory levels, sync/full/block
# flushes, gzip headers with name/comment/mtime/extra/FHCRC built by hand,
# empty bodies, 1 MiB random and text payloads, concatenated members and
# trailing garbage), hand-made deflate streams (every zlib error, fixed and
# dynamic blocks, stored blocks, incomplete and over-subscribed codes,
# distances reaching too far back, length 258 from code 284), and thousands
# of corrupted variants (bit flips, byte changes, truncation at every prefix
# length of small inputs, bad headers, bad checksums, raw deflate without a
# header, random data behind valid headers).
#
# Each input goes through the oracle, Zlib::Inflate.new(32 + MAX_WBITS) fed
# as Net::HTTPResponse::Inflater feeds it (inflate per chunk, with a block;
# finish unless total_in is 0; the return value of finish is ignored, as
# Net::HTTP ignores it), once whole and once in random chunks (and one byte
# at a time for inputs up to 4 KiB); the chunkings must agree.  Then the
# native driver, tests/c/test_inflate.c built with src/inflate.c under
# -fsanitize=address,undefined, replays every case whole, in the same
# chunks and one byte at a time, and reports each mismatch.
#
# --write-fixtures also writes the committed subset (a few hundred cases,
# < 2 MB) to tests/fixtures/inflate/cases.bin (format: see test_inflate.c).
# --bench builds the driver at -O2 and measures throughput on ~10 MiB of
# gzip'd text (Ruby's own library sources).
require 'zlib'
require 'stringio'
require 'digest'
require 'tmpdir'
require 'fileutils'
require 'rbconfig'

ROOT = File.expand_path('..', __dir__)

opts = { seed: 20240601, scale: 1, write: false, keep: nil, bench: false, cc: ENV['CC'] || 'clang' }
args = ARGV.dup
until args.empty?
  a = args.shift
  case a
  when '--seed' then opts[:seed] = Integer(args.shift)
  when '--scale' then opts[:scale] = Float(args.shift)
  when '--write-fixtures' then opts[:write] = true
  when '--keep' then opts[:keep] = args.shift
  when '--bench' then opts[:bench] = true
  when '--cc' then opts[:cc] = args.shift
  else abort "unknown option #{a}"
  end
end

RNG = Random.new(opts[:seed])
SCALE = opts[:scale]
def rnd(n) = RNG.rand(n)
def scaled(n) = [(n * SCALE).round, 1].max

# ---- payloads -------------------------------------------------------------

WORDS = %w[the of and to in is you that it he was for on are as with his they I at be this have from
           or one had by word but not what all were we when your can said there use an each which she
           do how their if will up other about out many then them these so some her would make like
           him into time has look two more write go see number no way could people my than first
           water been call who oil its now find long down day did get come made may part HTTP/1.1
           Content-Type application/json <div> </div> class="row" {"id": null, true false].freeze

def text(n)
  s = +''
  while s.bytesize < n
    s << WORDS[rnd(WORDS.size)]
    r = rnd(24)
    s << (r.zero? ? ".\n" : r == 1 ? ', ' : r == 2 ? "\t" : ' ')
  end
  s.byteslice(0, n).b
end

def json(n)
  s = +'['
  i = 0
  while s.bytesize < n
    s << %({"id":#{i},"name":"#{WORDS[rnd(WORDS.size)]}","score":#{rnd(100_000) / 100.0},"tags":["#{WORDS[rnd(WORDS.size)]}"]},\n)
    i += 1
  end
  s.byteslice(0, n).b
end

def rbytes(n) = RNG.bytes(n)

def pattern(n)
  # short periods (distances 1..7), long runs (length-258 matches), a little noise
  s = +''.b
  while s.bytesize < n
    case rnd(4)
    when 0 then s << (rnd(256).chr * (1 + rnd(2000)))
    when 1 then s << (rbytes(1 + rnd(7)) * (1 + rnd(300)))
    when 2 then s << rbytes(rnd(40))
    else s << text(rnd(500))
    end
  end
  s.byteslice(0, n)
end

def payload(kind, n)
  case kind
  when :text then text(n)
  when :json then json(n)
  when :random then rbytes(n)
  when :pattern then pattern(n)
  when :mixed then (text(n / 2) + rbytes(n / 4) + pattern(n - n / 2 - n / 4)).b
  end
end

# ---- compressors ------------------------------------------------------------

def deflate(data, level: 6, wbits: 15, mem: 8, strategy: Zlib::DEFAULT_STRATEGY, flushes: nil)
  d = Zlib::Deflate.new(level, wbits, mem, strategy)
  out = +''.b
  if flushes
    pos = 0
    flushes.each do |len, mode|
      begin
        out << d.deflate(data.byteslice(pos, len) || '', mode)
      rescue Zlib::BufError
        # a flush right after a flush, with no input: nothing to do
      end
      pos += len
    end
    out << d.deflate(data.byteslice(pos..) || '', Zlib::FINISH)
  else
    out << d.deflate(data, Zlib::FINISH)
  end
  d.close
  out
end

def raw_deflate(data, level = 6, strategy = Zlib::DEFAULT_STRATEGY) =
  deflate(data, level: level, wbits: -15, strategy: strategy)

# mtime: GzipWriter writes the current time when it is unset (or 0); that
# makes the bytes change from run to run, so it is fixed unless :now.
def gzip_writer(data, level: 6, strategy: Zlib::DEFAULT_STRATEGY, name: nil, comment: nil, mtime: 1_600_000_000)
  io = StringIO.new(+''.b)
  gz = Zlib::GzipWriter.new(io, level, strategy)
  gz.mtime = mtime unless mtime == :now
  gz.orig_name = name if name
  gz.comment = comment if comment
  gz.write(data)
  gz.finish
  io.string
end

# A gzip member with a hand-built header (FHCRC, FEXTRA, ...).
def gzip_manual(data, flags: 0, extra: nil, name: nil, comment: nil, mtime: 0, xfl: 0, os: 3, level: 6,
                hcrc_xor: 0, cm: 8, body: nil, crc: nil, isize: nil)
  h = [0x1f, 0x8b, cm, flags].pack('C4') + [mtime].pack('V') + [xfl, os].pack('CC')
  extra ||= ''.b
  h << [extra.bytesize].pack('v') << extra if flags & 4 != 0
  h << (name || 'name') << "\0" if flags & 8 != 0
  h << (comment || 'comment') << "\0" if flags & 16 != 0
  h << [(Zlib.crc32(h) & 0xffff) ^ hcrc_xor].pack('v') if flags & 2 != 0
  h + (body || raw_deflate(data, level)) +
    [crc || Zlib.crc32(data), isize || (data.bytesize & 0xffffffff)].pack('VV')
end

def zlib_wrap(body, data, cmf: 0x78, flg: nil, adler: nil)
  flg ||= begin
    f = 0x9c & 0xe0
    f + (31 - ((cmf << 8 | f) % 31)) % 31
  end
  [cmf, flg].pack('CC') + body + [adler || Zlib.adler32(data)].pack('N')
end

# ---- hand-made deflate streams ------------------------------------------------

class BitWriter
  def initialize
    @out = +''.b
    @acc = 0
    @n = 0
  end

  def bits(v, n)
    @acc |= (v & ((1 << n) - 1)) << @n
    @n += n
    while @n >= 8
      @out << (@acc & 0xff).chr
      @acc >>= 8
      @n -= 8
    end
    self
  end

  # Huffman codes go out most significant bit first.
  def code(c, len)
    r = 0
    len.times { |i| r = (r << 1) | ((c >> i) & 1) }
    bits(r, len)
  end

  def align = bits(0, (8 - @n) % 8)

  def bytes(s)
    align
    s.each_byte { |b| bits(b, 8) }
    self
  end

  def string = @n.positive? ? @out + (@acc & 0xff).chr : @out.dup
end

def canonical(lens)
  bl = Array.new(16, 0)
  lens.each { |l| bl[l] += 1 if l.positive? }
  nxt = Array.new(16, 0)
  code = 0
  (1..15).each do |b|
    code = (code + bl[b - 1]) << 1
    nxt[b] = code
  end
  nxt[0] = 0
  lens.map do |l|
    next nil unless l.positive?

    c = nxt[l]
    nxt[l] += 1
    c
  end
end

# Lengths of a complete code over the symbols in `used` (sorted), n symbols in all.
def complete_lengths(used, n)
  lens = Array.new(n, 0)
  k = used.size
  if k == 1
    lens[used[0]] = 1
    return lens
  end
  d = 0
  d += 1 while (1 << d) < k
  short = (1 << d) - k
  used.each_with_index { |s, i| lens[s] = i < short ? d - 1 : d }
  lens
end

LEN_BASE = [3, 4, 5, 6, 7, 8, 9, 10, 11, 13, 15, 17, 19, 23, 27, 31, 35, 43, 51, 59, 67, 83, 99, 115,
            131, 163, 195, 227, 258].freeze
LEN_EXTRA = [0, 0, 0, 0, 0, 0, 0, 0, 1, 1, 1, 1, 2, 2, 2, 2, 3, 3, 3, 3, 4, 4, 4, 4, 5, 5, 5, 5, 0].freeze
DIST_BASE = [1, 2, 3, 4, 5, 7, 9, 13, 17, 25, 33, 49, 65, 97, 129, 193, 257, 385, 513, 769, 1025, 1537,
             2049, 3073, 4097, 6145, 8193, 12289, 16385, 24577].freeze
DIST_EXTRA = [0, 0, 0, 0, 1, 1, 2, 2, 3, 3, 4, 4, 5, 5, 6, 6, 7, 7, 8, 8, 9, 9, 10, 10, 11, 11, 12, 12,
              13, 13].freeze
CL_ORDER = [16, 17, 18, 0, 8, 7, 9, 6, 10, 5, 11, 4, 12, 3, 13, 2, 14, 1, 15].freeze

# Symbols: [:lit, byte], [:match, len, dist], [:eob], [:litsym, sym] (raw
# literal/length symbol, no extra bits), [:rawlen, sym, extra], [:rawdist, sym, extra]
def len_code(len)
  i = LEN_BASE.rindex { |b| b <= len }
  [257 + i, len - LEN_BASE[i], LEN_EXTRA[i]]
end

def dist_code(dist)
  i = DIST_BASE.rindex { |b| b <= dist }
  [i, dist - DIST_BASE[i], DIST_EXTRA[i]]
end

# Expands symbols into what a correct inflater outputs (nil if a match is
# impossible).
def expand(syms, prev = +''.b)
  out = prev.dup
  syms.each do |s|
    case s[0]
    when :lit then out << s[1].chr
    when :match, :rawmatch
      len, dist = s[0] == :match ? [s[1], s[2]] : [s[5], s[6]]
      return nil if dist > out.bytesize

      len.times { out << out.getbyte(out.bytesize - dist).chr }
    end
  end
  out
end

def emit_symbols(w, syms, lcodes, llens, dcodes, dlens)
  syms.each do |s|
    case s[0]
    when :lit then w.code(lcodes[s[1]], llens[s[1]])
    when :eob then w.code(lcodes[256], llens[256])
    when :litsym then w.code(lcodes[s[1]] || 0, llens[s[1]].positive? ? llens[s[1]] : 1)
    when :match
      sym, ex, nex = len_code(s[1])
      w.code(lcodes[sym], llens[sym]).bits(ex, nex)
      dsym, dex, dnex = dist_code(s[2])
      w.code(dcodes[dsym] || 0, dlens[dsym].to_i.positive? ? dlens[dsym] : 1).bits(dex, dnex)
    when :rawmatch # [:rawmatch, lensym, lenextra, distsym, distextra, len, dist]
      w.code(lcodes[s[1]], llens[s[1]]).bits(s[2], LEN_EXTRA[s[1] - 257])
      w.code(dcodes[s[3]] || 0, dlens[s[3]].to_i.positive? ? dlens[s[3]] : 1).bits(s[4], DIST_EXTRA[s[3]] || 0)
    when :bits then w.bits(s[1], s[2])
    end
  end
end

FIXED_L = (Array.new(144, 8) + Array.new(112, 9) + Array.new(24, 7) + Array.new(8, 8)).freeze
FIXED_D = Array.new(32, 5).freeze

def fixed_block(w, last, syms)
  w.bits(last ? 1 : 0, 1).bits(1, 2)
  emit_symbols(w, syms, canonical(FIXED_L), FIXED_L, canonical(FIXED_D), FIXED_D)
end

def stored_block(w, last, data, nlen_xor: 0)
  w.bits(last ? 1 : 0, 1).bits(0, 2).align
  w.bits(data.bytesize, 16).bits((data.bytesize ^ 0xffff) ^ nlen_xor, 16)
  data.each_byte { |b| w.bits(b, 8) }
end

# Default literal/length and distance lengths for a symbol list: a complete
# code over the symbols used (plus end-of-block).
def default_lengths(syms)
  lused = [256]
  dused = []
  syms.each do |s|
    case s[0]
    when :lit then lused << s[1]
    when :match
      lused << len_code(s[1])[0]
      dused << dist_code(s[2])[0]
    when :rawmatch
      lused << s[1]
      dused << s[3]
    end
  end
  lused = lused.uniq.sort
  dused = dused.uniq.sort
  nlen = [257, (lused.max || 0) + 1].max
  ndist = [1, (dused.max || 0) + 1].max
  [complete_lengths(lused, nlen), dused.empty? ? Array.new(ndist, 0) : complete_lengths(dused, ndist)]
end

# A dynamic block.  llens/dlens: code lengths (their sizes give HLIT/HDIST);
# clseq: the code length symbols to send ([sym] or [sym, extra]); default:
# each length as itself.  cllens: code length code lengths (default: a
# complete code over the symbols used).  hclen: how many to send.
def dynamic_block(w, last, syms, llens: nil, dlens: nil, clseq: nil, cllens: nil, hclen: nil,
                  hlit: nil, hdist: nil, stop_after_header: false)
  dl_l, dl_d = default_lengths(syms)
  llens ||= dl_l
  dlens ||= dl_d
  clseq ||= (llens + dlens).map { |l| [l] }
  cllens ||= begin
    used = clseq.map(&:first).uniq.sort
    used << (used.include?(0) ? 1 : 0) if used.size == 1
    complete_lengths(used.sort, 19)
  end
  hclen ||= begin
    n = 19
    n -= 1 while n > 4 && cllens[CL_ORDER[n - 1]].zero?
    n
  end
  w.bits(last ? 1 : 0, 1).bits(2, 2)
  w.bits(hlit || (llens.size - 257), 5).bits(hdist || (dlens.size - 1), 5).bits(hclen - 4, 4)
  hclen.times { |i| w.bits(cllens[CL_ORDER[i]], 3) }
  clcodes = canonical(cllens)
  clseq.each do |sym, extra|
    w.code(clcodes[sym] || 0, cllens[sym].positive? ? cllens[sym] : 1)
    w.bits(extra || 0, { 16 => 2, 17 => 3, 18 => 7 }[sym] || 0)
  end
  return if stop_after_header

  emit_symbols(w, syms, canonical(llens), llens, canonical(dlens), dlens)
end

# ---- the oracle -----------------------------------------------------------

CLASS_CODE = { 'Zlib::DataError' => 7, 'Zlib::BufError' => 8, 'Zlib::NeedDict' => 15 }.freeze

def oracle(chunks)
  z = Zlib::Inflate.new(32 + Zlib::MAX_WBITS)
  out = String.new(encoding: Encoding::BINARY)
  chunks.each do |c|
    next if c.empty?

    z.inflate(c.dup) { |x| out << x }
  end
  z.finish if z.total_in.positive? # Net::HTTPResponse::Inflater#finish
  [:ok, out]
rescue Zlib::Error => e
  [:err, CLASS_CODE.fetch(e.class.name, 99), e.message, e.class.name]
ensure
  z&.close
end

def split(data, sizes)
  pos = 0
  sizes.map do |n|
    s = data.byteslice(pos, n)
    pos += n
    s
  end
end

def random_chunks(n)
  sizes = []
  left = n
  while left.positive?
    k = case rnd(10)
        when 0..3 then 1 + rnd(16)
        when 4..6 then 1 + rnd(4096)
        else 1 + rnd(65_536)
        end
    k = [k, left].min
    sizes << k
    left -= k
  end
  sizes = [n] if sizes.size > 65_000
  sizes
end

Case = Struct.new(:name, :group, :input, :max_output, :chunks, :expect)
CASES = []
$oracle_disagree = []

def add(name, group, input, max_output: 0)
  input = input.b
  chunks = input.empty? ? [] : random_chunks(input.bytesize)
  whole = oracle(input.empty? ? [] : [input])
  chunked = oracle(split(input, chunks))
  $oracle_disagree << [name, 'chunks', whole, chunked] if chunked[0..2] != whole[0..2]
  if input.bytesize <= 4096
    bytes = oracle(input.each_char.to_a)
    $oracle_disagree << [name, 'bytes', whole, bytes] if bytes[0..2] != whole[0..2]
  end
  expect = whole
  if max_output.positive? && whole[0] == :ok && whole[1].bytesize > max_output
    expect = [:err, 9, "inflated body exceeds the limit of #{max_output} bytes"]
  end
  CASES << Case.new(name, group, input, max_output, chunks, expect)
  whole
end

# ---- generation -------------------------------------------------------------

t0 = Time.now
sizes = [0, 1, 2, 10, 100, 1000, 5000, 40_000, 70_000, 300_000]
kinds = %i[text json random pattern mixed]

# 1. Ruby's own gzip and zlib streams.
bases = [] # [name, stream, data] kept small for corruption
kinds.each do |kind|
  sizes.each do |n|
    data = payload(kind, n)
    (0..9).each do |level|
      next if n > 100_000 && level.odd?

      g = gzip_writer(data, level: level)
      add("gzip #{kind} #{n} level #{level}", 'gzip', g)
      z = deflate(data, level: level)
      add("zlib #{kind} #{n} level #{level}", 'zlib', z)
      bases << ["gzip #{kind} #{n} l#{level}", g, data] if n <= 5000
      bases << ["zlib #{kind} #{n} l#{level}", z, data] if n <= 5000
    end
    [Zlib::FILTERED, Zlib::HUFFMAN_ONLY, Zlib::RLE, Zlib::FIXED].each do |st|
      add("gzip #{kind} #{n} strategy #{st}", 'strategy', gzip_writer(data, level: 6, strategy: st))
      add("zlib #{kind} #{n} strategy #{st}", 'strategy', deflate(data, strategy: st))
    end
    (8..15).each do |wb|
      [1, 9].each do |mem|
        add("zlib #{kind} #{n} wbits #{wb} mem #{mem}", 'wbits', deflate(data, wbits: wb, mem: mem, level: 1 + rnd(9)))
      end
      next if wb == 8 # zlib refuses windowBits 8 with a gzip wrapper

      add("deflate-gzip #{kind} #{n} wbits #{wb}", 'wbits', deflate(data, wbits: 16 + wb))
    end
  end
end

# Big payloads: 1 MiB random and text.
[[:random, 1 << 20], [:text, 1 << 20], [:pattern, 1 << 20], [:json, 3 << 20]].each do |kind, n|
  data = payload(kind, n)
  [1, 6, 9].each do |level|
    add("big gzip #{kind} #{n} level #{level}", 'big', gzip_writer(data, level: level))
    add("big zlib #{kind} #{n} level #{level}", 'big', deflate(data, level: level))
  end
  add("big gzip #{kind} #{n} level 0", 'big', gzip_writer(data, level: 0))
  add("big zlib #{kind} #{n} huffman", 'big', deflate(data, strategy: Zlib::HUFFMAN_ONLY))
end

# Flushes: empty stored blocks (sync), full flushes, block boundaries, many
# tiny blocks.
kinds.each do |kind|
  [1000, 50_000].each do |n|
    data = payload(kind, n)
    # 5: Z_BLOCK, 1: Z_PARTIAL_FLUSH (Ruby has no constants for them)
    [Zlib::SYNC_FLUSH, Zlib::FULL_FLUSH, 5, 1].each do |mode|
      fl = Array.new(scaled(20)) { [rnd(n / 10 + 1), mode] }
      add("zlib #{kind} #{n} flush #{mode}", 'flush', deflate(data, level: rnd(10), flushes: fl))
      add("gzip #{kind} #{n} flush #{mode}", 'flush', deflate(data, wbits: 31, level: rnd(10), flushes: fl))
    end
    fl = Array.new(200) { [rnd(20), Zlib::SYNC_FLUSH] }
    add("zlib #{kind} #{n} tiny blocks", 'flush', deflate(data, level: 6, flushes: fl))
  end
end

# gzip headers: names, comments, mtimes, FEXTRA, FHCRC, reserved bits, OS/XFL.
hdr_data = text(3000)
[nil, '', 'a', 'name.txt', 'x' * 300].each do |name|
  [nil, '', 'comment', 'c' * 1000].each do |comment|
    [:now, 1, 1_700_000_000].each do |mtime|
      add("gzip header name=#{name&.size} comment=#{comment&.size} mtime=#{mtime}",
          mtime == :now ? 'gzip-header-now' : 'gzip-header',
          gzip_writer(hdr_data, name: name, comment: comment, mtime: mtime))
    end
  end
end
(0..31).each do |flags|
  [0, 1, 0x100].each do |xor|
    next if xor != 0 && flags & 2 == 0

    extra = flags & 4 != 0 ? ['', 'AB', "AB\x02\x00hi", 'E' * 70_000][rnd(4)].b : nil
    extra = extra.byteslice(0, 65_535) if extra
    add("gzip manual flags=#{flags} hcrc_xor=#{xor} extra=#{extra&.size}", 'gzip-header',
        gzip_manual(hdr_data, flags: flags, extra: extra, name: 'file', comment: "com\xffment".b, hcrc_xor: xor))
  end
end
[0x20, 0x40, 0x80, 0xe0, 0x22, 0x5f].each do |f|
  add("gzip reserved flags #{f}", 'gzip-header', gzip_manual(hdr_data, flags: f))
end
[0, 7, 9, 255].each do |cm|
  add("gzip cm=#{cm}", 'gzip-header', gzip_manual(hdr_data, cm: cm))
  add("gzip cm=#{cm} reserved", 'gzip-header', gzip_manual(hdr_data, cm: cm, flags: 0x80))
end
add('gzip xfl/os', 'gzip-header', gzip_manual(hdr_data, xfl: 255, os: 255, mtime: 0xffffffff))
add('gzip bad crc', 'trailer', gzip_manual(hdr_data, crc: Zlib.crc32(hdr_data) ^ 1))
add('gzip bad isize', 'trailer', gzip_manual(hdr_data, isize: hdr_data.bytesize + 1))
add('gzip bad crc and isize', 'trailer', gzip_manual(hdr_data, crc: 0, isize: 0))
add('gzip isize mod 2^32', 'trailer', gzip_manual(hdr_data, isize: hdr_data.bytesize + (1 << 32) - (1 << 32)))

# zlib headers: every CMF/FLG pair with a valid check and a few without.
zbody = raw_deflate(hdr_data)
(0..255).each do |cmf|
  flgs = (0..255).select { |f| (cmf << 8 | f) % 31 == 0 }
  pick = [flgs.first, flgs.last, flgs.find { |f| f & 0x20 != 0 }, flgs.sample(random: RNG)].compact.uniq
  pick.each do |flg|
    add(format('zlib header %02x %02x', cmf, flg), 'zlib-header', zlib_wrap(zbody, hdr_data, cmf: cmf, flg: flg))
  end
  add(format('zlib header %02x bad check', cmf), 'zlib-header',
      zlib_wrap(zbody, hdr_data, cmf: cmf, flg: (0..255).find { |f| (cmf << 8 | f) % 31 != 0 }))
end
add('zlib bad adler', 'trailer', zlib_wrap(zbody, hdr_data, adler: Zlib.adler32(hdr_data) ^ 0x10000))
d = Zlib::Deflate.new(9, 15)
d.set_dictionary('hello world')
add('zlib with dictionary', 'zlib-header', d.deflate('hello world hello', Zlib::FINISH))
d.close
add('zlib FDICT truncated in dictid', 'zlib-header', "\x78\xbb\x01\x02".b)
add('zlib FDICT dictid only', 'zlib-header', "\x78\xbb\x01\x02\x03\x04".b)

# Raw deflate without a header, other formats.
kinds.each do |kind|
  [10, 1000].each do |n|
    data = payload(kind, n)
    (0..9).step(3) { |lv| add("raw deflate #{kind} #{n} level #{lv}", 'raw', raw_deflate(data, lv)) }
  end
end
add('plain text body', 'raw', "Hello, world!\n")
add('html body', 'raw', '<html><body>hi</body></html>')
add('zip local header', 'raw', "PK\x03\x04\x14\x00\x00\x00\x08\x00".b)
add('bzip2', 'raw', 'BZh91AY&SY')
add('single 1f', 'raw', "\x1f".b)
add('1f 8b only', 'raw', "\x1f\x8b".b)

# Empty bodies and empty payloads.
add('empty body', 'empty', '')
add('gzip of empty', 'empty', gzip_writer(''))
add('zlib of empty', 'empty', deflate(''))
add('gzip of empty level 0', 'empty', gzip_writer('', level: 0))

# Concatenated members and trailing garbage.
m1 = gzip_writer(text(2000))
m2 = gzip_writer(text(3000))
add('two gzip members', 'concat', m1 + m2)
add('gzip + garbage', 'concat', m1 + 'garbage after the end')
add('gzip + nul bytes', 'concat', m1 + "\0" * 100)
add('gzip + 1 byte', 'concat', m1 + 'x')
add('zlib + garbage', 'concat', deflate(text(2000)) + rbytes(1000))
add('zlib + zlib', 'concat', deflate(text(100)) + deflate(text(100)))
add('gzip + big garbage', 'concat', m1 + rbytes(200_000))

# Limits.
[m1, deflate(pattern(100_000)), gzip_writer(rbytes(70_000), level: 0)].each_with_index do |s, i|
  len = oracle([s])[1].bytesize
  [1, 2, 100, 265, 266, 300, len / 2, len - 1, len, len + 1, 1 << 31].each do |lim|
    add("limit #{i} #{lim} (#{len})", 'limit', s, max_output: lim)
  end
end

# 2. Hand-made streams.
def hand(name, w_or_body, syms_out = nil, wrap: %i[zlib gzip], group: 'hand')
  body = w_or_body.is_a?(BitWriter) ? w_or_body.string : w_or_body
  data = syms_out || ''.b
  add("#{name} [zlib]", group, zlib_wrap(body, data)) if wrap.include?(:zlib)
  add("#{name} [gzip]", group, gzip_manual(data, body: body)) if wrap.include?(:gzip)
  return unless group == 'hand' && body.bytesize <= 3000

  # Truncated at every length: each check must need exactly zlib's bits.
  z = zlib_wrap(body, data)
  (1...z.bytesize).each { |n| add("#{name} [zlib] truncated #{n}", 'hand-truncate', z.byteslice(0, n)) }
end

abc = 'abc'.bytes.map { |b| [:lit, b] }
w = BitWriter.new
fixed_block(w, true, abc + [[:eob]])
hand('fixed abc', w, 'abc')
[286, 287].each do |sym|
  w = BitWriter.new
  fixed_block(w, true, abc + [[:litsym, sym], [:eob]])
  hand("fixed literal/length #{sym}", w, 'abc')
end
[30, 31].each do |dsym|
  w = BitWriter.new
  fixed_block(w, true, abc + [[:rawmatch, 257, 0, dsym, 0, 3, 1], [:eob]])
  hand("fixed distance code #{dsym}", w, 'abc')
end
[[3, 1], [3, 3], [3, 4], [4, 3], [5, 10], [258, 3], [3, 32_768]].each do |len, dist|
  syms = abc + [[:match, len, dist], [:eob]]
  w = BitWriter.new
  fixed_block(w, true, syms)
  hand("fixed match len=#{len} dist=#{dist}", w, expand(syms) || 'abc')
end
w = BitWriter.new
fixed_block(w, true, [[:match, 3, 1], [:eob]])
hand('fixed match first', w, '')
# Length 258 from code 284 with extra 31 (zlib accepts it), and code 285.
syms = abc + [[:rawmatch, 284, 31, 0, 0, 258, 1], [:rawmatch, 285, 0, 2, 0, 258, 3], [:eob]]
w = BitWriter.new
fixed_block(w, true, syms)
hand('fixed length 284+31', w, expand(syms))
# Distances up to 32768 at the edge of the output.
big = text(40_000)
[32_768, 32_769, 40_000, 40_001].each do |dist|
  w = BitWriter.new
  stored_block(w, false, big.byteslice(0, 30_000))
  stored_block(w, false, big.byteslice(30_000, 10_000))
  syms = [[:match, 258, dist], [:eob]]
  fixed_block(w, true, syms)
  out = dist <= 32_768 ? expand(syms, big) : big
  hand("stored 40000 then match dist=#{dist}", w, out)
end
[1, 100, 255, 256, 257, 1000].each do |dist|
  pre = text(dist - 1 + rnd(3))
  w = BitWriter.new
  stored_block(w, false, pre)
  syms = [[:match, 10, dist], [:eob]]
  fixed_block(w, true, syms)
  hand("stored #{pre.size} then match dist=#{dist}", w, expand(syms, pre) || pre)
end
# A zlib header that declares a small window, distances beyond it.
[0x08, 0x18, 0x48, 0x78].each do |cmf|
  w = BitWriter.new
  stored_block(w, false, big.byteslice(0, 33_000))
  syms = [[:match, 100, 32_000], [:match, 50, 300], [:eob]]
  fixed_block(w, true, syms)
  out = expand(syms, big.byteslice(0, 33_000))
  flg = (0..255).find { |f| (cmf << 8 | f) % 31 == 0 }
  add(format('zlib cinfo %d far distance', cmf >> 4), 'hand', zlib_wrap(w.string, out, cmf: cmf, flg: flg))
end
# Block types.
w = BitWriter.new
w.bits(1, 1).bits(3, 2).bits(0, 13)
hand('block type 3', w)
w = BitWriter.new
w.bits(0, 1).bits(3, 2).bits(0, 13)
hand('block type 3 not last', w)
w = BitWriter.new
fixed_block(w, false, abc + [[:eob]])
w.bits(1, 1).bits(3, 2)
hand('fixed then block type 3', w, 'abc')
# Stored blocks.
[0, 1, 100, 65_535].each do |n|
  data = rbytes(n)
  w = BitWriter.new
  stored_block(w, true, data)
  hand("stored #{n}", w, data)
  w = BitWriter.new
  stored_block(w, true, data, nlen_xor: 1)
  hand("stored #{n} bad nlen", w, data)
end
w = BitWriter.new
stored_block(w, true, '', nlen_xor: 0x8000)
hand('stored nlen high bit', w)
w = BitWriter.new
fixed_block(w, false, abc + [[:eob]])
stored_block(w, false, 'def')
fixed_block(w, false, abc + [[:eob]])
stored_block(w, true, '')
hand('fixed stored fixed stored', w, 'abcdefabc')
w = BitWriter.new
stored_block(w, false, 'no final block')
hand('no final block', w, 'no final block')
w = BitWriter.new
stored_block(w, false, 'x')
hand('no final block, no more data', w, 'x', wrap: [:zlib])

# Dynamic blocks.
dsyms = text(200).bytes.map { |b| [:lit, b] } + [[:match, 20, 50], [:match, 258, 1], [:match, 3, 200], [:eob]]
dout = expand(dsyms)
w = BitWriter.new
dynamic_block(w, true, dsyms)
hand('dynamic valid', w, dout)
w = BitWriter.new
dynamic_block(w, false, dsyms)
dynamic_block(w, true, dsyms)
hand('dynamic twice', w, dout + expand(dsyms, dout).byteslice(dout.size..))
ll, dl = default_lengths(dsyms)
hand('dynamic hlit 30', BitWriter.new.tap { |x| dynamic_block(x, true, dsyms, hlit: 30) }, dout)
hand('dynamic hlit 31', BitWriter.new.tap { |x| dynamic_block(x, true, dsyms, hlit: 31) }, dout)
hand('dynamic hdist 30', BitWriter.new.tap { |x| dynamic_block(x, true, dsyms, hdist: 30) }, dout)
hand('dynamic hdist 31', BitWriter.new.tap { |x| dynamic_block(x, true, dsyms, hdist: 31) }, dout)
hand('dynamic 286 lengths', BitWriter.new.tap { |x| dynamic_block(x, true, dsyms, llens: ll + Array.new(286 - ll.size, 0)) }, dout)
hand('dynamic 30 distances', BitWriter.new.tap { |x| dynamic_block(x, true, dsyms, dlens: dl + Array.new(30 - dl.size, 0)) }, dout)
# Code length code problems.
seq = (ll + dl).map { |l| [l] }
used = seq.map(&:first).uniq.sort
cl_ok = complete_lengths(used, 19)
over = cl_ok.dup
over[used[0]] = 1 if used.size > 2
incomplete = cl_ok.dup
incomplete[used.max] = 7
hand('dynamic code lengths over-subscribed', BitWriter.new.tap { |x| dynamic_block(x, true, dsyms, cllens: over) }, dout)
hand('dynamic code lengths incomplete', BitWriter.new.tap { |x| dynamic_block(x, true, dsyms, cllens: incomplete) }, dout)
one = Array.new(19, 0)
one[8] = 1
hand('dynamic code lengths single code', BitWriter.new.tap { |x| dynamic_block(x, true, dsyms, cllens: one, clseq: seq.map { [8] }) }, dout)
[0, 1, 10, 300, 315, 316].each do |nbits|
  w = BitWriter.new
  dynamic_block(w, true, [], llens: ll, dlens: dl, cllens: Array.new(19, 0), hclen: 4 + rnd(16), clseq: [])
  w.bits(0, nbits)
  hand("dynamic code lengths all zero, #{nbits} bits", w)
end
w = BitWriter.new
dynamic_block(w, true, [], llens: ll, dlens: dl, cllens: Array.new(19, 0), hclen: 19, clseq: [])
w.bits((1 << 20) - 1, 20)
hand('dynamic code lengths all zero, ones', w)
hand('dynamic repeat first', BitWriter.new.tap { |x| dynamic_block(x, true, dsyms, clseq: [[16, 0]] + seq) }, dout)
hand('dynamic repeat first extra 3', BitWriter.new.tap { |x| dynamic_block(x, true, dsyms, clseq: [[16, 3]] + seq) }, dout)
total = ll.size + dl.size
[[17, 7], [18, 127], [16, 3]].each do |sym, extra|
  s2 = seq[0...-1] + [[sym, extra]]
  hand("dynamic repeat #{sym} overflow", BitWriter.new.tap { |x| dynamic_block(x, true, dsyms, clseq: s2) }, dout)
end
s2 = seq[0, total - 3] + [[17, 0]]
lz = ll + dl
lz = lz[0, total - 3] + [0, 0, 0]
hand('dynamic repeat 17 exact end', BitWriter.new.tap { |x| dynamic_block(x, true, dsyms, clseq: s2) }, dout)
s2 = seq[0, total - 1] + [[0]]
hand('dynamic zero last distance', BitWriter.new.tap { |x| dynamic_block(x, true, dsyms, clseq: s2) }, dout)
# Literal/length set problems.
noeob = ll.dup
noeob[256] = 0
hand('dynamic missing end-of-block', BitWriter.new.tap { |x| dynamic_block(x, true, dsyms, llens: noeob) }, dout)
l_over = ll.dup
l_over[ll.index { |v| v.positive? }] = 1
hand('dynamic literal/length over-subscribed', BitWriter.new.tap { |x| dynamic_block(x, true, dsyms, llens: l_over) }, dout)
l_inc = ll.dup
l_inc[ll.rindex { |v| v.positive? }] = 15
hand('dynamic literal/length incomplete', BitWriter.new.tap { |x| dynamic_block(x, true, dsyms, llens: l_inc) }, dout)
only_eob = Array.new(257, 0)
only_eob[256] = 1
hand('dynamic only end-of-block 1 bit', BitWriter.new.tap { |x| dynamic_block(x, true, [[:eob]], llens: only_eob, dlens: [0]) })
hand('dynamic only end-of-block, missing code used', BitWriter.new.tap { |x|
  dynamic_block(x, true, [[:bits, 1, 1], [:eob]], llens: only_eob, dlens: [0])
})
only_eob2 = Array.new(257, 0)
only_eob2[256] = 2
hand('dynamic only end-of-block 2 bits', BitWriter.new.tap { |x| dynamic_block(x, true, [[:eob]], llens: only_eob2, dlens: [0]) })
# Distance set problems.
d_over = dl.dup
d_over[dl.index { |v| v.positive? }] = 1 if dl.count(&:positive?) > 2
d_over = [1, 1, 1] if dl.count(&:positive?) <= 2
hand('dynamic distances over-subscribed', BitWriter.new.tap { |x| dynamic_block(x, true, dsyms, dlens: d_over) }, dout)
d_inc = dl.dup
d_inc[dl.rindex { |v| v.positive? }] = 15
hand('dynamic distances incomplete', BitWriter.new.tap { |x| dynamic_block(x, true, dsyms, dlens: d_inc) }, dout)
lsyms = text(100).bytes.map { |b| [:lit, b] }
lit_only = lsyms + [[:eob]]
ll2, = default_lengths(lit_only)
hand('dynamic no distance codes, literals only', BitWriter.new.tap { |x| dynamic_block(x, true, lit_only, llens: ll2, dlens: [0]) }, expand(lit_only))
ms = lsyms + [[:match, 5, 4], [:eob]]
ll3, = default_lengths(ms)
hand('dynamic no distance codes, match', BitWriter.new.tap { |x| dynamic_block(x, true, ms, llens: ll3, dlens: [0] * 5) }, expand(ms))
one_d = [0, 0, 0, 1]
hand('dynamic one distance code', BitWriter.new.tap { |x| dynamic_block(x, true, ms, llens: ll3, dlens: one_d) }, expand(ms))
hand('dynamic one distance code, missing code used', BitWriter.new.tap { |x|
  dynamic_block(x, true, lsyms + [[:litsym, len_code(5)[0]], [:bits, 1, 1], [:eob]], llens: ll3, dlens: [1])
})
hand('dynamic one distance code of 2 bits', BitWriter.new.tap { |x| dynamic_block(x, true, ms, llens: ll3, dlens: [0, 0, 0, 2]) }, expand(ms))
# Long codes (15 bits) that need subtables.
long_l = Array.new(286, 0)
syms15 = (0..255).to_a
lens15 = [1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14] # Kraft: the rest fill with 15s
kraft = lens15.sum { |l| 1.0 / (1 << l) }
n15 = ((1 - kraft) * (1 << 15)).round
pool = (0..285).to_a.shuffle(random: RNG) - [256]
assign = pool.first(lens15.size + n15 - 1) + [256]
assign.each_with_index { |s, i| long_l[s] = i < lens15.size ? lens15[i] : 15 }
if long_l.count(&:positive?) == lens15.size + n15
  lsy = (0..255).select { |s| long_l[s].positive? }
  msyms = Array.new(500) { [:lit, lsy.sample(random: RNG)] } + [[:eob]]
  hand('dynamic 15-bit literal codes', BitWriter.new.tap { |x| dynamic_block(x, true, msyms, llens: long_l, dlens: [0]) }, expand(msyms))
end
dl15 = Array.new(30, 0)
[1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 15].each_with_index { |l, i| dl15[29 - i] = l }
ds = text(40_000).bytes.first(3000).map { |b| [:lit, b] }
(0..29).each { |dsym| ds << [:rawmatch, 257, 0, dsym, 0, 3, DIST_BASE[dsym]] if dl15[dsym].positive? && DIST_BASE[dsym] <= 3000 }
ds << [:eob]
lld, = default_lengths(ds)
hand('dynamic 15-bit distance codes', BitWriter.new.tap { |x| dynamic_block(x, true, ds, llens: lld, dlens: dl15) }, expand(ds))

# Invalid codes at every bit alignment (each then truncated at every
# length by hand()): an error must need exactly the bits zlib's needs.  A
# fixed block of n 9-bit literals in front shifts what follows by 10 + 9n bits.
(0..7).each do |nlit|
  shift = [[:lit, 0xc8]] * nlit + [[:eob]]
  pre = expand(shift)
  blk = ->(x) { fixed_block(x, false, shift) }
  lit = text(3).bytes.map { |b| [:lit, b] }
  [286, 287].each do |sym|
    hand("align #{nlit} fixed literal/length #{sym}", BitWriter.new.tap { |x| blk[x]; fixed_block(x, true, lit + [[:litsym, sym], [:eob]]) }, pre)
  end
  [30, 31].each do |dsym|
    hand("align #{nlit} fixed distance #{dsym}", BitWriter.new.tap { |x| blk[x]; fixed_block(x, true, lit + [[:rawmatch, 257, 0, dsym, 0, 3, 1], [:eob]]) }, pre)
  end
  ms = lit + [[:match, 3, 1], [:eob]]
  lm, = default_lengths(ms)
  hand("align #{nlit} no distance codes", BitWriter.new.tap { |x| blk[x]; dynamic_block(x, true, ms, llens: lm, dlens: [0]) }, pre)
  hand("align #{nlit} one distance code, other used", BitWriter.new.tap { |x|
    blk[x]
    dynamic_block(x, true, lit + [[:litsym, 257], [:bits, 1, 1], [:eob]], llens: lm, dlens: [1])
  }, pre)
  hand("align #{nlit} only end-of-block, other used", BitWriter.new.tap { |x|
    blk[x]
    dynamic_block(x, true, [[:bits, 1, 1], [:eob]], llens: only_eob, dlens: [0])
  }, pre)
  hand("align #{nlit} all-zero code lengths", BitWriter.new.tap { |x|
    blk[x]
    dynamic_block(x, true, [], llens: ll, dlens: dl, cllens: Array.new(19, 0), hclen: 4 + nlit, clseq: [])
    x.bits(0, 300 + nlit)
  }, pre)
  hand("align #{nlit} repeat first", BitWriter.new.tap { |x| blk[x]; dynamic_block(x, true, dsyms, clseq: [[16, nlit & 3]] + seq) }, pre)
  hand("align #{nlit} too many symbols", BitWriter.new.tap { |x| blk[x]; dynamic_block(x, true, dsyms, hlit: 30 + (nlit & 1)) }, pre)
end
zd = "\x78\xbb\x11\x22\x33\x44".b
(1..zd.bytesize).each { |n| add("zlib FDICT prefix #{n}", 'zlib-header', zd.byteslice(0, n)) }

# 3. Corruptions of small streams.
def flip(s, bit)
  t = s.dup
  t.setbyte(bit / 8, t.getbyte(bit / 8) ^ (1 << (bit % 8)))
  t
end

bases.shuffle!(random: RNG)
nb = scaled(400)
bases.first(nb).each_with_index do |(name, s, _data), bi|
  next if s.empty?

  scaled(12).times do |k|
    t = s.dup
    (1 + rnd(3)).times { t = flip(t, rnd(t.bytesize * 8)) }
    add("#{name} flip #{k}", 'flip', t)
  end
  # flips in the header and first block header
  scaled(6).times do |k|
    t = flip(s, rnd([s.bytesize, 24].min * 8))
    add("#{name} head flip #{k}", 'flip-head', t)
  end
  scaled(3).times do |k|
    t = s.dup
    t.setbyte(rnd(t.bytesize), rnd(256))
    add("#{name} byte #{k}", 'byte', t)
  end
  # truncations: every prefix for the smallest, a sample otherwise
  lens = s.bytesize <= 300 && bi < scaled(60) ? (0...s.bytesize).to_a : Array.new(scaled(5)) { rnd(s.bytesize) }
  lens.each { |n| add("#{name} truncated #{n}", 'truncate', s.byteslice(0, n)) }
  # checksum / trailer damage
  add("#{name} trailer flip", 'trailer', flip(s, (s.bytesize - 1 - rnd([8, s.bytesize].min)) * 8 + rnd(8)))
end
# Every single-bit flip of a few tiny streams.
[gzip_writer('hello hello hello'), deflate('abcabcabcabc', level: 9), gzip_manual('hi', flags: 0x1e, extra: 'EX', name: 'n', comment: 'c')].each_with_index do |s, i|
  (s.bytesize * 8).times { |b| add("tiny #{i} bit #{b}", 'tiny-flip', flip(s, b)) }
end

# 4. Random data behind valid headers, and random dynamic headers.
scaled(1500).times do |i|
  head = ["\x78\x9c", "\x78\x01", "\x1f\x8b\x08\x00\x00\x00\x00\x00\x00\x03", "\x08\x1d"][rnd(4)].b
  body = rbytes(1 + rnd([8, 64, 1000][rnd(3)]))
  body.setbyte(0, (body.getbyte(0) & ~6) | [2, 4, 4, 2][rnd(4)]) # mostly dynamic/fixed blocks
  add("random body #{i}", 'random-body', head + body)
end
scaled(1500).times do |i|
  # a dynamic block with random code lengths
  w = BitWriter.new
  w.bits(rnd(2), 1).bits(2, 2)
  hlit = rnd(10).zero? ? rnd(32) : rnd(30)
  hdist = rnd(10).zero? ? rnd(32) : rnd(30)
  hclen = rnd(16)
  w.bits(hlit, 5).bits(hdist, 5).bits(hclen, 4)
  cl = Array.new(hclen + 4) { rnd(3).zero? ? 0 : rnd(8) }
  cl.each { |l| w.bits(l, 3) }
  body = w.string + rbytes(rnd(300))
  s = zlib_wrap(body, '')[0...-4]
  add("random dynamic header #{i}", 'random-dynamic', s)
  next unless i < scaled(300)

  (1...[s.bytesize, 72].min).each { |n| add("random dynamic header #{i} truncated #{n}", 'random-dynamic-truncate', s.byteslice(0, n)) }
end
scaled(800).times do |i|
  # valid dynamic header (complete random codes), random symbols after it
  data = payload(%i[text random pattern][rnd(3)], 50 + rnd(3000))
  s = raw_deflate(data, 1 + rnd(9))
  cut = rnd(s.bytesize)
  t = s.byteslice(0, cut) + rbytes(rnd(200))
  add("random tail #{i}", 'random-tail', zlib_wrap(t, data))
end
scaled(300).times do |i|
  # a match distance just beyond the output so far
  pre = text(1 + rnd(2000))
  w = BitWriter.new
  stored_block(w, false, pre) unless rnd(4).zero?
  n = pre.bytesize
  syms = [[:match, 3 + rnd(256), [n + rnd(3), 1].max], [:eob]]
  fixed_block(w, true, syms)
  hand("too far back #{i}", w, expand(syms, pre) || pre, wrap: [%i[zlib gzip][rnd(2)]], group: 'far')
end

# 5. Random valid dynamic blocks: random complete codes (up to 15 bits, so
# subtables), code lengths sent with and without 16/17/18 runs, random
# literals and matches; some with a damaged code length sequence; truncated
# at every length for a few.
def random_complete(k, maxlen)
  leaves = [0]
  while leaves.size < k
    cand = leaves.each_index.select { |i| leaves[i] < maxlen }
    i = rnd(2).zero? ? cand.max_by { |j| leaves[j] } : cand.sample(random: RNG)
    d = leaves.delete_at(i)
    leaves << d + 1 << d + 1
  end
  leaves.shuffle(random: RNG)
end

def rle_lengths(lens)
  seq = []
  i = 0
  while i < lens.size
    l = lens[i]
    run = 1
    run += 1 while i + run < lens.size && lens[i + run] == l
    if l.zero? && run >= 3 && rnd(4) != 0
      n = [run, 138].min
      seq << (n >= 11 ? [18, n - 11] : [17, n - 3])
      i += n
    elsif l.positive? && run >= 4 && rnd(4) != 0
      seq << [l]
      n = [run - 1, 6].min
      seq << [16, n - 3]
      i += 1 + n
    else
      seq << [l]
      i += 1
    end
  end
  seq
end

scaled(1200).times do |i|
  nl = 1 + rnd(rnd(2).zero? ? 30 : 285)
  lsyms = ((0..285).to_a - [256]).sample(nl - 1, random: RNG) + [256]
  nlen = [257, lsyms.max + 1].max
  nlen = [nlen + rnd(10), 286].min if rnd(3).zero?
  llens = Array.new(nlen, 0)
  depths = lsyms.size == 1 ? [rnd(2).zero? ? 1 : 1 + rnd(15)] : random_complete(lsyms.size, 15)
  lsyms.each_with_index { |sym, j| llens[sym] = depths[j] }
  nd = rnd(6).zero? ? 0 : 1 + rnd(30)
  dsyms = (0..29).to_a.sample(nd, random: RNG)
  ndist = [1, (dsyms.max || 0) + 1].max
  ndist = [ndist + rnd(5), 30].min if rnd(3).zero?
  dlens = Array.new(ndist, 0)
  ddepths = dsyms.size == 1 ? [1 + (rnd(4).zero? ? 1 : 0)] : random_complete(dsyms.size, 15)
  dsyms.each_with_index { |sym, j| dlens[sym] = ddepths[j] }
  clseq = rle_lengths(llens + dlens)
  clused = clseq.map(&:first).uniq
  clused << ((0..18).to_a - clused).sample(random: RNG) if clused.size == 1
  cllens = Array.new(19, 0)
  random_complete(clused.size, 7).each_with_index { |d, j| cllens[clused[j]] = d }
  damage = rnd(12)
  case damage
  when 0 then clseq = [[16, rnd(4)]] + clseq
  when 1 then clseq[-1] = [[16, 17, 18][rnd(3)], rnd(128) & 3]
  when 2 then cllens[clused.sample(random: RNG)] = rnd(8)
  end
  tag = damage < 3 ? " damaged #{damage}" : ''
  syms = []
  outn = 0
  lits = lsyms.select { |x| x < 256 }
  lens_avail = lsyms.select { |x| x > 256 }
  (rnd(400)).times do
    near = dsyms.select { |x| DIST_BASE[x] <= outn }
    near = dsyms if rnd(1000).zero?
    if !near.empty? && !lens_avail.empty? && rnd(3).zero?
      ls = lens_avail.sample(random: RNG)
      lx = rnd(1 << LEN_EXTRA[ls - 257])
      ds = near.sample(random: RNG)
      dx = rnd(1 << DIST_EXTRA[ds])
      dx = rnd([outn - DIST_BASE[ds] + 1, 1 << DIST_EXTRA[ds]].min) if DIST_BASE[ds] <= outn && rnd(20) != 0
      len = ls == 284 && lx == 31 ? 258 : LEN_BASE[ls - 257] + lx
      syms << [:rawmatch, ls, lx, ds, dx, len, DIST_BASE[ds] + dx]
      outn += len
    elsif !lits.empty?
      syms << [:lit, lits.sample(random: RNG)]
      outn += 1
    end
  end
  syms << [:eob]
  w = BitWriter.new
  pre = rnd(3).zero? ? text(rnd(40_000)) : ''.b
  stored_block(w, false, pre) unless pre.empty?
  dynamic_block(w, true, syms, llens: llens, dlens: dlens, clseq: clseq, cllens: cllens)
  body = w.string
  out = expand(syms, pre) || pre
  z = zlib_wrap(body, out)
  add("random dynamic block #{i}#{tag}", 'random-valid-dynamic', z)
  add("random dynamic block #{i} [gzip]", 'random-valid-dynamic', gzip_manual(out, body: body)) if rnd(4).zero?
  next unless i < scaled(150) && pre.empty?

  (1...[z.bytesize, 400].min).each { |n| add("random dynamic block #{i} truncated #{n}", 'random-valid-dynamic-truncate', z.byteslice(0, n)) }
end

gen_time = Time.now - t0
puts format('generated %d cases in %.1f s (Ruby %s, zlib %s)', CASES.size, gen_time, RUBY_VERSION, Zlib.zlib_version)
unless $oracle_disagree.empty?
  puts "ORACLE DISAGREES WITH ITSELF across chunkings for #{$oracle_disagree.size} cases:"
  $oracle_disagree.first(20).each { |n, how, a, b| puts "  #{n} [#{how}]: #{a[0..2].inspect[0, 100]} vs #{b[0..2].inspect[0, 100]}" }
end

# ---- case files -------------------------------------------------------------

def pack_case(c)
  s = [c.name.bytesize].pack('v') + c.name.b + [c.max_output, c.input.bytesize].pack('VV') + c.input
  s << [c.chunks.size].pack('v') << c.chunks.pack('V*')
  if c.expect[0] == :ok
    s << [0, c.expect[1].bytesize].pack('CV') << Digest::SHA256.digest(c.expect[1])
  else
    s << [c.expect[1], c.expect[2].bytesize].pack('Cv') << c.expect[2].b
  end
  s
end

def write_cases(path, cases)
  File.open(path, 'wb') do |f|
    f.write("NHINFL1\n".b + [cases.size].pack('V'))
    cases.each { |c| f.write(pack_case(c)) }
  end
end

summary = Hash.new(0)
CASES.each { |c| summary[c.expect[0] == :ok ? 'ok' : "#{c.expect[1]} #{c.expect[2]}"] += 1 }
puts 'expected results:'
summary.sort_by { |k, v| [-v, k] }.each { |k, v| puts format('  %6d  %s', v, k) }

dir = opts[:keep] || Dir.mktmpdir('verify-inflate')
FileUtils.mkdir_p(dir)
all = File.join(dir, 'all.bin')
write_cases(all, CASES)

def sh!(*cmd)
  system(*cmd) or abort "failed: #{cmd.join(' ')}"
end

exe = File.join(dir, 'test_inflate')
sh!(opts[:cc], '-std=c11', '-O1', '-g', '-Wall', '-Wextra', '-Werror', '-fsanitize=address,undefined',
    '-fno-sanitize-recover=all', '-fno-omit-frame-pointer', '-o', exe,
    File.join(ROOT, 'tests/c/test_inflate.c'), File.join(ROOT, 'src/inflate.c'), File.join(ROOT, 'src/buf.c'))
t1 = Time.now
out = IO.popen({ 'ASAN_OPTIONS' => 'detect_leaks=1' }, [exe, all], err: %i[child out], &:read)
status = $?
fails = out.lines.grep(/^FAIL/)
puts out.lines.reject { |l| l =~ /^\d+ passed/ }.first(60).join
last = out.lines.grep(/^\d+ passed, \d+ failed/).last
puts format('native driver (ASan/UBSan, whole + chunks + 1-byte): %s  [%.1f s]', last&.strip || 'no summary', Time.now - t1)
mismatches = fails.size
puts "mismatches: #{mismatches} (#{CASES.size} cases x 3 feedings; oracle self-disagreements: #{$oracle_disagree.size})"

# ---- fixtures -----------------------------------------------------------------

if opts[:write]
  per_group = Hash.new(0)
  quota = Hash.new(14).merge('tiny-flip' => 24, 'hand' => 200, 'far' => 10, 'limit' => 40, 'big' => 1,
                             'truncate' => 30, 'flip' => 40, 'flip-head' => 30, 'random-dynamic' => 30,
                             'random-body' => 20, 'random-tail' => 20, 'zlib-header' => 30, 'gzip-header' => 40,
                             'trailer' => 12, 'empty' => 10, 'concat' => 10, 'raw' => 12)
  # Every distinct expected result at least once, then per-group quotas of small cases.
  picked = []
  seen = {}
  CASES.each do |c|
    key = c.expect[0] == :ok ? nil : c.expect[2]
    next if key.nil? || seen[key] || c.input.bytesize > 100_000 || c.group == 'gzip-header-now'

    seen[key] = true
    picked << c
  end
  CASES.each do |c|
    next if picked.include?(c)
    next if c.input.bytesize > (c.group == 'big' ? 400_000 : 20_000)
    next if c.group == 'gzip-header-now' # not reproducible
    next if per_group[c.group] >= quota[c.group]
    next if c.group != 'hand' && c.group != 'tiny-flip' && rnd(3).zero?

    per_group[c.group] += 1
    picked << c
  end
  fx = File.join(ROOT, 'tests/fixtures/inflate')
  FileUtils.mkdir_p(fx)
  path = File.join(fx, 'cases.bin')
  write_cases(path, picked)
  puts format('wrote %s: %d cases, %d bytes', path.sub("#{ROOT}/", ''), picked.size, File.size(path))
  o2 = IO.popen([exe, path], err: %i[child out], &:read)
  puts "fixture replay: #{o2.lines.last&.strip}"
  mismatches += 1 unless $?.success?
end

# ---- throughput ----------------------------------------------------------------

if opts[:bench]
  src = Dir[File.join(RbConfig::CONFIG['rubylibdir'], '**/*.rb')].sort
  body = +''.b
  src.cycle.each do |f|
    body << File.binread(f)
    break if body.bytesize >= 10 << 20
  end
  body = body.byteslice(0, 10 << 20)
  gz = File.join(dir, 'bench.gz')
  File.binwrite(gz, gzip_writer(body, level: 6))
  File.binwrite(File.join(dir, 'bench-json.gz'), gzip_writer(json(10 << 20), level: 6))
  File.binwrite(File.join(dir, 'bench-random.gz'), gzip_writer(rbytes(10 << 20), level: 6))
  bexe = File.join(dir, 'bench_inflate')
  sh!(opts[:cc], '-std=c11', '-O2', '-o', bexe, File.join(ROOT, 'tests/c/test_inflate.c'),
      File.join(ROOT, 'src/inflate.c'), File.join(ROOT, 'src/buf.c'))
  %w[bench.gz bench-json.gz bench-random.gz].each { |f| system(bexe, '--bench', File.join(dir, f), '400') }
  t = Time.now
  n = 0
  while Time.now - t < 2
    Zlib::GzipReader.new(StringIO.new(File.binread(gz))).read
    n += 1
  end
  puts format('for reference, Ruby Zlib::GzipReader on bench.gz: %.1f MB/s output', n * body.bytesize / (Time.now - t) / 1e6)
end

FileUtils.rm_rf(dir) unless opts[:keep]
exit(mismatches.zero? && status.success? && $oracle_disagree.empty? ? 0 : 1)
