// typescript-eslint over src/, native/, test/ and bench/, with the type-aware rules a daemon of
// promises needs: no promise left floating, none passed where a plain callback is expected.
import js from '@eslint/js';
import tseslint from 'typescript-eslint';

export default tseslint.config(
  { ignores: ['.dependency-cruiser.cjs', 'dist/', 'node_modules/', 'coverage/', 'test/e2e/kubernetes/', 'test/e2e/containerd/', 'test/e2e/etcd/'] },
  js.configs.recommended,
  ...tseslint.configs.recommended,
  {
    languageOptions: { globals: { process: 'readonly', console: 'readonly', setTimeout: 'readonly', clearTimeout: 'readonly', setInterval: 'readonly', clearInterval: 'readonly', setImmediate: 'readonly', Buffer: 'readonly', URL: 'readonly', AbortController: 'readonly', AbortSignal: 'readonly' } },
    rules: {
      '@typescript-eslint/no-unused-vars': ['error', { argsIgnorePattern: '^_', varsIgnorePattern: '^_' }],
      '@typescript-eslint/consistent-type-imports': 'error',
      'no-console': 'error',
    },
  },
  {
    files: ['**/*.ts'],
    languageOptions: { parserOptions: { projectService: true, tsconfigRootDir: import.meta.dirname } },
    rules: {
      '@typescript-eslint/no-floating-promises': 'error',
      '@typescript-eslint/no-misused-promises': 'error',
    },
  },
  {
    // Commands print to the terminal; tests and benchmarks may too.
    files: ['src/cli/**', 'src/main.ts', 'test/**', 'bench/**', 'scripts/**'],
    rules: { 'no-console': 'off' },
  },
);
