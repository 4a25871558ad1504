// Stands in for `testcontainers` in bullmq-extra's tests: instead of a Docker container of Redis
// (`new GenericContainer('redis:7.4.0').withExposedPorts(6379)...start()`), the private
// redis-server run.sh started, on BULLMQ_EXTRA_REDIS_PORT. Only what the tests call is here.
const port = Number(process.env.BULLMQ_EXTRA_REDIS_PORT);

class StartedRedis {
  getMappedPort() {
    return port;
  }
  getHost() {
    return '127.0.0.1';
  }
  async stop() {}
}

// The builder's settings (ports, environment, command, wait strategy) describe the container the
// tests would get; the local server is already that: each returns the builder.
class GenericContainer {
  withExposedPorts() {
    return this;
  }
  withEnvironment() {
    return this;
  }
  withCommand() {
    return this;
  }
  withWaitStrategy() {
    return this;
  }
  async start() {
    if (!Number.isInteger(port) || port <= 0) throw new Error('BULLMQ_EXTRA_REDIS_PORT is not set: run the suite through run.sh');
    return new StartedRedis();
  }
}

const Wait = { forLogMessage: () => ({}) };

module.exports = { GenericContainer, Wait };
