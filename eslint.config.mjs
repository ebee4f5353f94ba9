// Lint: typed rules that matter in daemons (no floating promises) and the module boundaries of
// architecture.md: apps never import apps; only libs/zk imports the ZK client; only libs/runtime
// imports execa.
import tseslint from 'typescript-eslint';
import nx from '@nx/eslint-plugin';

const zkClient = { name: 'node-zookeeper-client', message: 'Only libs/zk talks to Zookeeper: use @pvc/zk.' };
const execa = { name: 'execa', message: 'Only libs/runtime runs commands: use the Exec port from @pvc/runtime.' };

// Values are decoded only through the key table of libs/zk (keys.ts + key-read.ts): an app never
// reads a raw value from a ZkClient (named `zk` or `<x>.zk` throughout the tree).
const rawZkRead = (object) => ({
  selector: `CallExpression[callee.type='MemberExpression'][callee.property.name=/^(read|get|watchData)$/]${object}`,
  message: 'Read ZK values through their codec: readKey/readKeys/readKeyWithStat/watchKey with a key from @pvc/zk (keys.ts).',
});
const noRawZkReads = ['error', rawZkRead("[callee.object.name='zk']"), rawZkRead("[callee.object.property.name='zk']")];

export default tseslint.config(
  { ignores: ['**/dist/**', '**/node_modules/**', '.nx/**', '**/*.mjs', '**/*.js'] },
  ...tseslint.configs.recommended,
  {
    files: ['**/*.ts'],
    languageOptions: { parserOptions: { projectService: true, tsconfigRootDir: import.meta.dirname } },
    plugins: { '@nx': nx },
    rules: {
      '@typescript-eslint/no-floating-promises': [
        'error',
        { allowForKnownSafeCalls: [{ from: 'package', package: 'node:test', name: ['test', 'describe', 'it', 'suite'] }] },
      ],
      '@typescript-eslint/no-misused-promises': 'error',
      '@typescript-eslint/consistent-type-imports': 'error',
      '@typescript-eslint/no-unused-vars': ['error', { argsIgnorePattern: '^_', varsIgnorePattern: '^_' }],
      '@nx/enforce-module-boundaries': [
        'error',
        {
          allow: [],
          depConstraints: [
            { sourceTag: 'type:app', onlyDependOnLibsWithTags: ['type:lib'] },
            { sourceTag: 'type:lib', onlyDependOnLibsWithTags: ['type:lib'] },
          ],
        },
      ],
      'no-restricted-imports': ['error', { paths: [zkClient, execa] }],
    },
  },
  {
    files: ['apps/*/src/**/*.ts'],
    ignores: ['**/*.spec.ts', 'apps/*/src/testing/**', 'apps/*/src/testing.ts', 'apps/*/src/**/rig.ts'],
    rules: { 'no-restricted-syntax': noRawZkReads },
  },
  { files: ['libs/zk/**/*.ts'], rules: { 'no-restricted-imports': ['error', { paths: [execa] }] } },
  { files: ['libs/runtime/**/*.ts'], rules: { 'no-restricted-imports': ['error', { paths: [zkClient] }] } },
);
