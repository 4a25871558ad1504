/**
 * `HopperDashboardModule`: Hopper's dashboard (`hopper-queue-dashboard`, an optional peer dependency)
 * served by the Nest application under a path, behind the guards you give (your own
 * authentication), besides the dashboard's own auth setting.
 */
import {
  All,
  Controller,
  Module,
  Req,
  Res,
  UseGuards,
  type CanActivate,
  type DynamicModule,
  type OnModuleDestroy,
  type Type,
} from '@nestjs/common';
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { DashboardOptions } from 'hopper-queue-dashboard';
import { requireHere } from './require-here.cjs';

/** Options of {@link HopperDashboardModule.forRoot}. */
export interface HopperDashboardModuleOptions extends Omit<DashboardOptions, 'basePath'> {
  /** Where to serve it (e.g. `admin/hopper`). */
  path: string;
  /** Nest guards run before every dashboard request (e.g. your AuthGuard). */
  guards?: (CanActivate | Type<CanActivate>)[];
}

/** The wildcard route syntax of the installed Nest (path-to-regexp 8 since Nest 11). */
function wildcard(): string[] {
  const version = (requireHere('@nestjs/core/package.json') as { version: string }).version;
  return Number.parseInt(version, 10) >= 11 ? ['/', '/*path'] : ['/', '/*'];
}

@Module({})
export class HopperDashboardModule {
  /** Serves the dashboard under `options.path`, behind `options.guards`. */
  static forRoot(options: HopperDashboardModuleOptions): DynamicModule {
    const path = options.path.replace(/^\/+|\/+$/g, '');
    if (!path) throw new TypeError('HopperDashboardModule needs a path to serve the dashboard under (e.g. "admin/hopper").');
    const { path: _path, guards = [], ...dashboardOptions } = options;

    @Controller(path)
    @UseGuards(...guards)
    class HopperDashboardController implements OnModuleDestroy {
      private listener: Promise<{ handle: (req: IncomingMessage, res: ServerResponse) => void; close: () => Promise<void> }> | undefined;

      // The dashboard (an optional peer dependency) is loaded on the first request: `import()` in the
      // ES module build, compiled by TypeScript to `require()` in the CommonJS one, so each build
      // loads the dashboard's build of its own kind (the CommonJS one under Jest, too).
      private start() {
        this.listener ??= import('hopper-queue-dashboard').then(({ createDashboard, toNodeListener }) => {
          const dashboard = createDashboard({ ...dashboardOptions, basePath: `/${path}/` });
          return { handle: toNodeListener(dashboard), close: () => dashboard.close() };
        });
        return this.listener;
      }

      @All(wildcard())
      async handle(@Req() req: IncomingMessage, @Res() res: ServerResponse): Promise<void> {
        (await this.start()).handle(req, res);
      }

      async onModuleDestroy(): Promise<void> {
        if (this.listener) await (await this.listener).close();
      }
    }

    return { module: HopperDashboardModule, controllers: [HopperDashboardController] };
  }
}
