// ESLint (flat config): `npm run lint`, part of `npm test`. The recommended rules, plus the
// globals of where each file runs: src/ in browsers and node alike, examples/softphone.js in
// the page, the rest in node (test-browser/ passes functions to the page with page.evaluate,
// so it knows both).
import js from '@eslint/js';
import globals from 'globals';

export default [
  { ignores: ['node_modules/'] },
  js.configs.recommended,
  {
    files: ['**/*.js'],
    languageOptions: { ecmaVersion: 2022, sourceType: 'module' },
    rules: {
      // `const { type, ...rest } = message` drops a field on purpose
      'no-unused-vars': ['error', { ignoreRestSiblings: true }],
      eqeqeq: ['error', 'always'],
      'no-var': 'error',
      'prefer-const': 'error',
    },
  },
  { files: ['src/**/*.js'], languageOptions: { globals: globals.browser } },
  { files: ['examples/softphone.js'], languageOptions: { globals: globals.browser } },
  { files: ['examples/serve.js', 'scripts/**/*.js', 'test/**/*.js', 'eslint.config.js'], languageOptions: { globals: globals.node } },
  { files: ['test-browser/**/*.js'], languageOptions: { globals: { ...globals.node, ...globals.browser } } },
];
