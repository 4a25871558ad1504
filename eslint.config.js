// Lint: typescript-eslint with type information for the library and its tests. The seam rule
// keeps core code and behaviour tests from importing a backend's internals (Redis, SQLite): only
// the backend factory (src/backend/create.ts) and the backend itself may.
import js from '@eslint/js';
import tseslint from 'typescript-eslint';

const seam = {
  'no-restricted-imports': [
    'error',
    {
      patterns: [
        {
          group: ['**/backend/redis/**', '**/backend/redis', 'ioredis', '**/backend/sqlite/**', 'better-sqlite3'],
          message:
            "Core code and behaviour tests talk to storage through the backend seam (src/backend/backend.ts, created via src/backend/create.ts), never a backend's internals (Redis, SQLite).",
        },
      ],
    },
  ],
};

export default tseslint.config(
  {
    ignores: [
      '**/dist/**',
      '**/node_modules/**',
      'packages/hopper/src/backend/redis/scripts.generated.ts',
      'bench/results/**',
      // Users' projects, compiled and run by the packaging check against the packed packages.
      'scripts/packaging/fixtures/**',
      '.packaging-work/**',
    ],
  },
  js.configs.recommended,
  {
    files: ['**/*.ts'],
    extends: [...tseslint.configs.recommendedTypeChecked],
    languageOptions: {
      parserOptions: { projectService: true, tsconfigRootDir: import.meta.dirname },
    },
    rules: {
      '@typescript-eslint/no-floating-promises': 'error',
      '@typescript-eslint/no-misused-promises': 'error',
      '@typescript-eslint/no-unused-vars': [
        'error',
        { argsIgnorePattern: '^_', varsIgnorePattern: '^_', destructuredArrayIgnorePattern: '^_' },
      ],
      '@typescript-eslint/require-await': 'off',
    },
  },
  {
    files: ['packages/hopper/src/**/*.ts', 'packages/hopper/test/**/*.ts'],
    ignores: [
      'packages/hopper/src/backend/redis/**',
      'packages/hopper/src/backend/sqlite/**',
      'packages/hopper/src/backend/create.ts',
      'packages/hopper/test/helpers/**',
      'packages/hopper/test/backend-redis/**',
      // The SQLite backend's own plumbing (its wake file and write-lock wait), below the seam.
      'packages/hopper/test/backend-sqlite/wake-ups.test.ts',
      'packages/hopper/test/cluster/**',
      // hopper migrate reads and writes BullMQ's keys (another system's storage) on a Redis
      // connection of its own; Hopper's side it reaches through the seam (importJobs, ...).
      'packages/hopper/src/migrate/**',
      'packages/hopper/test/migrate/**',
      'packages/hopper/test/scale/migrate.test.ts',
    ],
    rules: seam,
  },
  {
    files: ['**/*.js', '**/*.mjs', '**/*.cjs'],
    languageOptions: {
      globals: {
        process: 'readonly',
        console: 'readonly',
        setTimeout: 'readonly',
        clearTimeout: 'readonly',
        setInterval: 'readonly',
        clearInterval: 'readonly',
        setImmediate: 'readonly',
        Buffer: 'readonly',
        URL: 'readonly',
        fetch: 'readonly',
        AbortController: 'readonly',
        TextDecoder: 'readonly',
        require: 'readonly',
        module: 'writable',
        __dirname: 'readonly',
      },
    },
  },
);
