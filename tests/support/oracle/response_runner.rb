# frozen_string_literal: true
#
# The Ruby side of the response differential tests: parses response bytes
# with MRI's own net/http, exactly as Net::HTTP#transport_request does over a
# socket, but over an in-memory StringIO:
#
#   sock = Net::BufferedIO.new(StringIO.new(bytes))
#   res  = Net::HTTPResponse.read_new(sock)
#   res.decode_content = decode
#   res.reading_body(sock, method != 'HEAD') {}
#
# Runs in ruby.wasm 4.0 / 3.4 (loaded by tests/support/oracle/response.mjs into a VM
# booted by tests/support/oracle/rubyvm.mjs) and natively (`ruby response_runner.rb
# in.json out.json`, used for content decoding, which crashes ruby.wasm).
#
# Case:   { "bytes": base64, "method": "GET", "decode": false,
#           "skipInterim": false, "messages": 1 }
#   messages > 1 parses that many responses one after the other from the
#   same socket (keep-alive); skipInterim loops read_new while the response
#   is a Net::HTTPInformation, as transport_request does.
# Result: { "responses": [ res, ... ], "rest": str, "error"?: { class, message, index } }
#   res:  { "class", "code", "message", "httpVersion", "headers": [[k, [v...]]...],
#           "capitalized": [[K, "v, v"]...], "body": str|nil }
#   str:  a String when the bytes are valid UTF-8, else { "b64": base64 }.

require 'net/http'
require 'json'
require 'stringio'
begin
  require 'zlib'
rescue LoadError
  nil
end

module NetHttpResponseOracle
  class VMBroken < StandardError; end

  module_function

  def str(s)
    return nil if s.nil?
    u = s.dup.force_encoding(Encoding::UTF_8)
    u.valid_encoding? ? u : { 'b64' => [s.b].pack('m0') }
  end

  def response(res)
    {
      'class' => res.class.name,
      'code' => str(res.code),
      'message' => str(res.message),
      'httpVersion' => str(res.http_version),
      'headers' => res.to_hash.map { |k, v| [str(k), v.map { |x| str(x) }] },
      'capitalized' => res.each_capitalized.map { |k, v| [str(k), str(v)] },
      'body' => str(res.body),
    }
  end

  def rest_of(sock)
    sock.read_all(+''.b)
  rescue StandardError
    ''.b
  end

  def run_case(c)
    bytes = c['bytes'].unpack1('m0')
    sock = Net::BufferedIO.new(StringIO.new(bytes))
    method = c['method'] || 'GET'
    out = { 'responses' => [] }
    n = c['messages'] || 1
    n.times do |i|
      begin
        res = Net::HTTPResponse.read_new(sock)
        res.decode_content = c['decode'] ? true : false
        if c['skipInterim']
          while res.is_a?(Net::HTTPInformation)
            res = Net::HTTPResponse.read_new(sock)
            res.decode_content = c['decode'] ? true : false
          end
        end
        res.reading_body(sock, method != 'HEAD') {}
        out['responses'] << response(res)
      rescue SystemStackError, NoMemoryError => e
        raise VMBroken, "#{e.class}: #{e.message}"
      rescue Exception => e # rubocop:disable Lint/RescueException
        out['error'] = { 'class' => e.class.name, 'message' => str(e.message), 'index' => i }
        break
      end
    end
    out['rest'] = str(rest_of(sock)) unless out['error']
    out
  end

  def run_file(in_path, out_path)
    cases = JSON.parse(File.read(in_path, encoding: 'UTF-8'))
    results = []
    begin
      cases.each { |c| results << run_case(c) }
    rescue VMBroken, SystemStackError, NoMemoryError => e
      results << { 'broken' => "#{e.class}: #{e.message}" }
    end
    File.write(out_path, JSON.generate(results, ascii_only: true))
    results.length
  end
end

if $PROGRAM_NAME == __FILE__ && ARGV.length == 2
  NetHttpResponseOracle.run_file(ARGV[0], ARGV[1])
end
