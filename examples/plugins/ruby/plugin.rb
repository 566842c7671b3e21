#!/usr/bin/env ruby
# frozen_string_literal: true

# wend's example activity plugin in Ruby, written from examples/plugins/README.md.
#
# Implements the conformance set every example plugin shares (greet, echo, sleep, fail, record,
# resume) with Debian's ruby-grpc and ruby-google-protobuf only (OpenSSL, from Ruby's standard
# library, makes the AutoMTLS certificate). Besides wend.plugin.v1.Activities it does what
# go-plugin does for Go plugins: checks the magic cookie, serves the gRPC health service
# (service "plugin": SERVING) and GRPCController.Shutdown, negotiates AutoMTLS, prints the
# handshake line, and exits when its host goes away. It serves Lane too.
#
# Use it from a workflow with `plugins: {demo: {command: [ruby, plugin.rb]}}` (path relative
# to the workflow file). The stubs in gen/ come from generate.sh.

$LOAD_PATH.unshift(File.join(__dir__, 'gen'))

require 'base64'
require 'json'
require 'openssl'
require 'grpc'
require 'activities_services_pb'
require 'health_services_pb'
require 'grpc_controller_services_pb'

# Must match sdk/go/wire.
COOKIE_KEY = 'WEND_PLUGIN'
COOKIE_VALUE = 'wend-activities-v1'
APP_PROTOCOL = 1
MAX_PAYLOAD = 2 << 20
MAX_MESSAGE = 16 << 20

V1 = Wend::Plugin::V1

# JSON travels in bytes fields, which protobuf hands over as binary (ASCII-8BIT) strings: read
# them as the UTF-8 they are, and send binary (String#b).
def utf8(bytes)
  bytes.dup.force_encoding(Encoding::UTF_8)
end

# A typed activity failure; non_retryable fails the activity whatever its retry policy.
class ActivityError < StandardError
  attr_reader :type, :non_retryable, :details

  def initialize(type, message, non_retryable: false, details: nil)
    super(message)
    @type = type
    @non_retryable = non_retryable
    @details = details
  end

  def event
    details = @details.nil? ? '' : JSON.generate(@details).b
    V1::ExecuteEvent.new(error: V1::Error.new(type: @type, message: message, non_retryable: @non_retryable,
                                              details: details))
  end
end

# One try: its request, the previous try's last progress, cancellation and heartbeats. emit
# receives each event and whether it is the try's last; nothing follows the last.
class Try
  attr_reader :request, :reason

  def initialize(request, &emit)
    @request = request
    @emit = emit
    @lock = Mutex.new
    @ended = false
    @woken = ConditionVariable.new # signalled on cancel
    @deadline = request.deadline_unix_nanos.zero? ? nil : request.deadline_unix_nanos / 1e9
  end

  def cancel(reason)
    @lock.synchronize do
      @reason ||= reason
      @woken.broadcast
    end
  end

  # Sleeps up to seconds; true when the try was cancelled or its deadline passed.
  def wait(seconds)
    seconds = [seconds, [@deadline - Time.now.to_f, 0].max].min if @deadline
    @lock.synchronize { @woken.wait(@lock, seconds) unless @reason }
    return true if @reason

    if @deadline && Time.now.to_f >= @deadline
      cancel('deadline')
      return true
    end
    false
  end

  # The error that ends a cancelled try.
  def check!
    raise ActivityError.new('Timeout', "#{@request.activity}: deadline exceeded") if @reason == 'deadline'

    raise ActivityError.new('Cancelled', "#{@request.activity}: cancelled by the host")
  end

  # The try's W3C trace context ('00-<trace id>-<span id>-<flags>': the run's trace, the try's
  # span), for the plugin's own spans to join; '' when the run has none.
  def traceparent
    @request.traceparent
  end

  # The progress the previous try last reported, decoded; nil on a first try.
  def last_progress
    raw = @request.last_progress
    raw.empty? ? nil : JSON.parse(utf8(raw))
  end

  def heartbeat(progress = nil)
    raw = progress.nil? ? '' : JSON.generate(progress).b
    send_event(V1::ExecuteEvent.new(heartbeat: V1::Heartbeat.new(progress: raw)), false)
  end

  def send_event(event, final)
    @lock.synchronize do
      return if @ended

      @ended = final
      @emit.call(event, final)
    end
  end

  # Runs the activity on this thread and sends its result or error.
  def run
    act = ACTIVITIES[@request.activity]
    if act.nil?
      raise ActivityError.new('UnknownActivity', "unknown activity #{@request.activity.inspect} " \
                                                 "(have #{ACTIVITIES.keys.sort.join(', ')})", non_retryable: true)
    end
    if @request.input.bytesize > MAX_PAYLOAD
      raise ActivityError.new('PayloadTooLarge', "input of #{@request.activity} is #{@request.input.bytesize} " \
                                                 "bytes, over the #{MAX_PAYLOAD}-byte limit", non_retryable: true)
    end
    begin
      input = @request.input.empty? ? nil : JSON.parse(utf8(@request.input))
    rescue JSON::ParserError => e
      raise ActivityError.new('BadInput', "decode input of #{@request.activity}: #{e.message}", non_retryable: true)
    end
    out = JSON.generate(act[:run].call(self, input)).b
    if out.bytesize > MAX_PAYLOAD
      raise ActivityError.new('PayloadTooLarge', "output of #{@request.activity} is #{out.bytesize} bytes, " \
                                                 "over the #{MAX_PAYLOAD}-byte limit", non_retryable: true)
    end
    send_event(V1::ExecuteEvent.new(result: V1::Result.new(output: out)), true)
  rescue ActivityError => e
    send_event(e.event, true)
  rescue StandardError => e # a plain exception is a retryable failure
    send_event(ActivityError.new('Error', "#{e.class}: #{e.message}").event, true)
  end
end

def sleep_activity(try, input)
  start = Time.now.to_f
  finish = start + input.fetch('ms', 0) / 1000.0
  loop do
    left = finish - Time.now.to_f
    return { slept_ms: ((Time.now.to_f - start) * 1000).to_i } if left <= 0

    try.check! if try.wait([0.1, left].min)
    try.heartbeat({ slept_ms: ((Time.now.to_f - start) * 1000).to_i }) if Time.now.to_f < finish
  end
end

def record_activity(try, input)
  raise ActivityError.new('BadInput', 'record: path is required', non_retryable: true) if input['path'].to_s.empty?

  req = try.request
  line = { activity_execution_id: req.activity_execution_id, activity_attempt_id: req.activity_attempt_id,
           attempt: req.attempt, note: input['note'], pid: Process.pid, traceparent: try.traceparent }
  File.open(input['path'], File::WRONLY | File::APPEND | File::CREAT, 0o644) do |f|
    f.write("#{JSON.generate(line)}\n")
    f.fsync
  end
  line
end

def resume_activity(try, input)
  pages = input.fetch('pages', 0)
  start = (try.last_progress || {}).fetch('page', 0)
  ((start + 1)..pages).each do |page|
    if page == input['fail_at'] && try.last_progress.nil?
      raise ActivityError.new('Interrupted', "resume: interrupted before page #{page}")
    end

    try.heartbeat({ page: page })
  end
  { resumed_from: start, pages: pages }
end

def object_schema(required, properties)
  { type: 'object', required: required, properties: properties }
end

# The conformance set.
ACTIVITIES = {
  'greet' => { run: ->(_t, i) { { greeting: "hello, #{i['name']}" } }, description: 'Returns a greeting for name.',
               input: object_schema(['name'], { name: { type: 'string' } }),
               output: object_schema(['greeting'], { greeting: { type: 'string' } }) },
  'echo' => { run: ->(_t, i) { i }, description: 'Returns its input unchanged.', input: {}, output: {} },
  'sleep' => { run: method(:sleep_activity),
               description: 'Sleeps ms milliseconds, heartbeating every 100 ms; stops early when cancelled.',
               input: object_schema(['ms'], { ms: { type: 'integer', minimum: 0 } }),
               output: object_schema(['slept_ms'], { slept_ms: { type: 'integer' } }) },
  'fail' => { run: lambda { |_t, i|
                     raise ActivityError.new(i['type'].to_s, i['message'].to_s, non_retryable: i['non_retryable'] == true,
                                                                                 details: i['details'])
                   },
              description: 'Fails with the given error.',
              input: { type: 'object', properties: { type: { type: 'string' }, message: { type: 'string' },
                                                     non_retryable: { type: 'boolean' } } },
              output: {} },
  'record' => { run: method(:record_activity),
                description: 'Appends one JSON line describing this try to path and fsyncs it.',
                input: object_schema(['path'], { path: { type: 'string' }, note: {} }), output: { type: 'object' } },
  'resume' => { run: method(:resume_activity),
                description: 'Does pages 1..pages, heartbeating {page} after each; resumes after the last ' \
                             "progress's page; a first try fails retryably before page fail_at.",
                input: object_schema(['pages'], { pages: { type: 'integer', minimum: 0 }, fail_at: { type: 'integer' } }),
                output: object_schema(%w[resumed_from pages],
                                      { resumed_from: { type: 'integer' }, pages: { type: 'integer' } }) }
}.freeze

# wend.plugin.v1.Activities.
class Activities < V1::Activities::Service
  def describe(_request, _call)
    V1::DescribeResponse.new(activities: ACTIVITIES.keys.sort.map do |name|
      a = ACTIVITIES[name]
      V1::ActivityInfo.new(name: name, description: a[:description],
                           input_schema: JSON.generate(a[:input]), output_schema: JSON.generate(a[:output]))
    end)
  end

  # One try: the first message is its request, a later cancel (or the stream's end) stops it.
  def execute(requests, _call)
    events = Queue.new
    Thread.new do
      try = nil
      begin
        requests.each do |msg|
          case msg.input
          when :request
            next if try

            try = Try.new(msg.request) { |ev, final| events << [ev, final] }
            Thread.new { try.run }
          when :cancel
            try&.cancel(msg.cancel.reason.empty? ? 'cancelled' : msg.cancel.reason)
          end
        end
      rescue StandardError # the stream broke or was cancelled
      end
      try ? try.cancel('cancelled') : events << [nil, true]
    end
    Enumerator.new do |y|
      loop do
        ev, final = events.pop
        y << ev if ev
        break if final
      end
    end
  end

  # Execute many times over one stream, one try at a time (activities.proto): a reader thread
  # takes the host's messages, a request starts a try once the last one has ended, a cancel
  # cancels the try in flight and is ignored when there is none; when the host closes its side
  # the try in flight is cancelled and the lane ends after its final event.
  def lane(requests, _call)
    events = Queue.new # the tries' events, then :end
    idle = Queue.new   # holds a token while no try is in flight
    idle << true
    current = nil
    lock = Mutex.new
    Thread.new do
      begin
        requests.each do |msg|
          case msg.input
          when :request
            idle.pop
            try = Try.new(msg.request) do |ev, final|
              events << ev
              if final
                lock.synchronize { current = nil }
                idle << true
              end
            end
            lock.synchronize { current = try }
            Thread.new { try.run }
          when :cancel
            lock.synchronize { current }&.cancel(msg.cancel.reason.empty? ? 'cancelled' : msg.cancel.reason)
          end
        end
      rescue StandardError # the stream broke or was cancelled
      end
      lock.synchronize { current }&.cancel('cancelled')
      idle.pop
      events << :end
    end
    Enumerator.new do |y|
      loop do
        ev = events.pop
        break if ev == :end

        y << ev
      end
    end
  end
end

# grpc.health.v1.Health: "plugin" (and the server as a whole) is SERVING.
class Health < Grpc::Health::V1::Health::Service
  def check(request, _call)
    status = ['', 'plugin'].include?(request.service) ? :SERVING : :SERVICE_UNKNOWN
    Grpc::Health::V1::HealthCheckResponse.new(status: status)
  end
end

# plugin.GRPCController: Shutdown makes the process exit, once the answer is on its way.
class Controller < Plugin::GRPCController::Service
  def shutdown(_request, _call)
    Thread.new do
      sleep 0.05
      $stderr.flush
      exit!(0)
    end
    Plugin::Empty.new
  end
end

# A fresh self-signed certificate for localhost, as go-plugin makes its own: P-256 key, a CA,
# server and client auth, valid from 30 s ago; returns [cert PEM, key PEM, cert DER].
def server_certificate
  key = OpenSSL::PKey::EC.generate('prime256v1')
  cert = OpenSSL::X509::Certificate.new
  cert.version = 2
  cert.serial = OpenSSL::BN.rand(127)
  cert.subject = cert.issuer = OpenSSL::X509::Name.parse('/O=wend/CN=localhost')
  cert.public_key = key
  cert.not_before = Time.now - 30
  cert.not_after = Time.now + (30 * 365 * 24 * 3600)
  ext = OpenSSL::X509::ExtensionFactory.new(cert, cert)
  cert.add_extension(ext.create_extension('basicConstraints', 'CA:TRUE', true))
  cert.add_extension(ext.create_extension('keyUsage', 'digitalSignature,keyEncipherment,keyAgreement,keyCertSign', true))
  cert.add_extension(ext.create_extension('extendedKeyUsage', 'serverAuth,clientAuth'))
  cert.add_extension(ext.create_extension('subjectAltName', 'DNS:localhost'))
  cert.sign(key, OpenSSL::Digest.new('SHA256'))
  [cert.to_pem, key.private_to_pem, cert.to_der]
end

# Exit when the host is gone: the parent-death signal covers Linux, this covers the rest.
def watch_parent(ppid)
  Thread.new do
    loop do
      if Process.ppid != ppid
        warn "wend plugin: host process #{ppid} is gone; exiting"
        exit!(1)
      end
      sleep 1
    end
  end
end

def main
  if ENV[COOKIE_KEY] != COOKIE_VALUE
    warn 'This is a wend plugin; wend starts it (see `wend plugin describe`).'
    return 1
  end
  versions = ENV.fetch('PLUGIN_PROTOCOL_VERSIONS', APP_PROTOCOL.to_s).split(',')
  unless versions.include?(APP_PROTOCOL.to_s)
    warn "wend plugin: host speaks protocol versions #{versions.join(',')}, this plugin #{APP_PROTOCOL}"
    return 1
  end
  host = ENV.fetch('WEND_HOST_PID', '')
  watch_parent(host.match?(/\A\d+\z/) ? host.to_i : Process.ppid)

  # Each lane holds a pool thread for its life; the host keeps up to 32 idle lanes open.
  server = GRPC::RpcServer.new(pool_size: 100, server_args: { 'grpc.max_receive_message_length' => MAX_MESSAGE,
                                                              'grpc.max_send_message_length' => MAX_MESSAGE })
  client_cert = ENV.fetch('PLUGIN_CLIENT_CERT', '')
  cert_field = ''
  if client_cert.empty?
    port = server.add_http2_port('127.0.0.1:0', :this_port_is_insecure)
  else # AutoMTLS: trust only the host's certificate, present our own
    cert_pem, key_pem, cert_der = server_certificate
    creds = GRPC::Core::ServerCredentials.new(client_cert, [{ private_key: key_pem, cert_chain: cert_pem }], true)
    port = server.add_http2_port('127.0.0.1:0', creds)
    cert_field = "|#{Base64.strict_encode64(cert_der).delete('=')}"
  end
  server.handle(Activities)
  server.handle(Health)
  server.handle(Controller)
  Thread.new { server.run }
  server.wait_till_running
  $stdout.write("1|#{APP_PROTOCOL}|tcp|127.0.0.1:#{port}|grpc#{cert_field}\n")
  $stdout.flush
  sleep
end

exit(main) if $PROGRAM_NAME == __FILE__
